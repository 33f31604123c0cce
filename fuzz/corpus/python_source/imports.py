"""import os  # not an import: a docstring"""
import a.b.c as x, d
from . import sibling
from ..pkg.mod import (one as uno,
    two,)
from top import *
if TYPE_CHECKING:
    from typing import Any; import json
s = r'\'import fake'
f"{x!r} import nothing"
def g():
    import inner \
        .deeper
