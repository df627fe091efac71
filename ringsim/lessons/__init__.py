"""The course: lesson files whose every number comes from the engine, loaded and checked.

`load_lessons()` reads the shipped course (or a teacher's folder); each Lesson has a
scenario, its stops and its sections, with placeholders filled and answers computed.
No Textual here: the terminal runner and the TUI panel both build on this API.
"""

from .load import (Problem, check_lessons, default_directory, load_lesson, load_lessons, load_numbered,
                   outline_lessons)
from .model import Lesson, Outline, Question, Scenario, Section

__all__ = ["Lesson", "Outline", "Problem", "Question", "Scenario", "Section", "check_lessons",
           "default_directory", "load_lesson", "load_lessons", "load_numbered", "outline_lessons"]
