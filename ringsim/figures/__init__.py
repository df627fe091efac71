"""Pictures of a simulation: every step as a vector figure (SVG), and as PNG, PDF, GIF or HTML.

The drawing libraries (drawsvg; typst for PNG and PDF, Pillow for GIF) load only inside the
functions that draw, so `import ringsim` stays light. Install them with the `figures` extra.
"""
