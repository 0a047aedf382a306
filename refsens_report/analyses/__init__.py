"""The analyses of docs/method.md section 3, one module each; ``registry.ANALYSES`` orders them.

A new analysis is one module that builds an ``Analysis`` (``base.py``) and one line in ``registry.py``. This
file imports nothing, so importing one analysis module never imports the others.
"""
