"""Every protocol object of docs/spec.md §6 as an immutable, lossless pydantic model,
one module a family (a session's objects, a catalog's, a grade's ...).

Each module's ``__all__`` names its objects, and :mod:`kestrel_protocol` (the one barrel)
re-exports them all: import an object from there (``from kestrel_protocol import
Clock``), or from its module. A new object is written once, in its module and its
``__all__``; a new module is one more pair of lines in the barrel.
"""
