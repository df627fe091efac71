"""predict reads a size as nccl-tests does: count = size / wordSize in integer division
(nccl-tests src/common.cu, setupArgs), so a size that is not whole elements is rounded down,
timed and printed as count × wordSize bytes, and the table says so."""

from __future__ import annotations

import json

import pytest

from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.studies.predict import predict, whole_elements


def test_the_count_is_integer_division_as_nccl_tests_does():
    assert whole_elements(6, 4) == (1, 4) and whole_elements(7, 4) == (1, 4)
    assert whole_elements(3, 4) == (0, 0) and whole_elements(8, 4) == (2, 8)
    # Exact at any size, where a float would round: 2**60 + 3 bytes of float is 2**58 elements.
    assert whole_elements((1 << 60) + 3, 4) == (1 << 58, 1 << 60)
    assert whole_elements((1 << 60) + 9, 8) == ((1 << 57) + 1, (1 << 60) + 8)


def test_a_rounded_size_is_timed_as_the_bytes_nccl_tests_would_move():
    six, four = predict("dgx-h100", 8, [6, 4])
    assert (six.bytes, six.count, six.requested) == (4, 1, 6)
    assert (four.bytes, four.count, four.requested) == (4, 1, None)
    assert six.seconds == four.seconds and six.algbw == four.algbw == 4 / four.seconds
    half = predict("dgx-h100", 8, [1 << 20 | 1], dtype="half")[0]
    assert (half.bytes, half.count, half.requested) == (1 << 20, 1 << 19, (1 << 20) + 1)
    with pytest.raises(RingsimError, match="whole numbers of bytes"):
        predict("dgx-h100", 8, [6.0])


def test_the_table_says_which_sizes_were_rounded_down(capsys):
    assert main(["predict", "--gpus", "8", "--sizes", "6B,7B,8B,9B"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == ("# 3 sizes that are not whole float elements (4 B each) were rounded down, "
                        "as nccl-tests does (count = size / wordSize): 6 B → 4 B, 7 B → 4 B, 9 B → 8 B")
    assert [line.split()[:2] for line in lines[4:]] == [["4", "1"], ["4", "1"], ["8", "2"], ["8", "2"]]
    assert main(["predict", "--gpus", "8", "--sizes", "8B..64B"]) == 0
    assert "rounded" not in capsys.readouterr().out  # whole elements: no note
    assert main(["predict", "--gpus", "8", "--sizes", "1B..64B:x3", "--dtype", "double"]) == 0
    out = capsys.readouterr().out
    assert "# 4 sizes that are not whole double elements (8 B each) were rounded down" in out
    assert "1 B → 0 B, 3 B → 0 B, 9 B → 8 B, 27 B → 24 B" in out
    assert main(["predict", "--gpus", "8", "--sizes", "1B,2B,3B,5B,6B,7B", "--dtype", "double"]) == 0
    assert "1 B → 0 B, 2 B → 0 B, 3 B → 0 B, 5 B → 0 B and 2 more" in capsys.readouterr().out


def test_json_keeps_the_size_asked_for(capsys):
    assert main(["predict", "--gpus", "8", "--sizes", "6B,8B", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["bytes"], r["count"], r["requested_bytes"]) for r in rows] == [(4, 1, 6), (8, 2, 8)]
