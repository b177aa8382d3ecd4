"""TOSA reference evaluation and output checking.

Sub-packages and modules are imported explicitly by their users (for example
``reference.compliance`` for the floating-point compliance checker), so importing
``reference`` itself stays cheap.
"""
