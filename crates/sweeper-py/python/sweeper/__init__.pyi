"""Type stubs of the sweeper package (the extension module ``sweeper._sweeper``)."""

from collections.abc import Sequence
from typing import Literal, Union

import numpy as np
import numpy.typing as npt

__version__: str

Direction = Literal["max", "min", "maximize", "minimize"]
ArrayLike = Union[npt.ArrayLike, Sequence[Sequence[float]]]

class ConfigError(ValueError):
    """A sweep config that ``sweeper validate`` rejects."""

    path: str | None
    rule: str
    line: int | None
    column: int | None
    errors: list[dict[str, object]]

def pareto_front(X: ArrayLike, directions: Sequence[Direction]) -> npt.NDArray[np.int64]:
    """Indices of the non-dominated rows of ``X`` (an ``(n, d)`` array), sorted by the
    last column ascending, ties by row index. ``directions``: one ``"max"`` or ``"min"``
    per column. A C-contiguous float64 array is read without a copy; other numeric layouts
    and dtypes are converted once. A NaN raises ``ValueError`` naming its row and column.
    The GIL is released while the kernel runs."""

def nondominated_ranks(X: ArrayLike, directions: Sequence[Direction]) -> npt.NDArray[np.int64]:
    """Per row of ``X`` its front number (0 = non-dominated)."""

def hypervolume(X: ArrayLike, ref: Sequence[float], directions: Sequence[Direction]) -> float:
    """The hypervolume dominated by the rows of ``X`` up to the reference point ``ref``."""

def merge_fronts(A: ArrayLike, B: ArrayLike, directions: Sequence[Direction]) -> npt.NDArray[np.int64]:
    """The front of the rows of ``A`` and ``B``: indices into their concatenation, ascending."""
