"""Test-vector output: TOSA flatbuffer graphs and their tensor files.

Kept free of imports so that ``import vectors.<module>`` stays cheap.
"""
