"""sweeper: score configuration sweeps against an optimization goal, find Pareto fronts,
and run a sampler-driven sweep, from Python.

The functions are the Rust crates of sweeper (the ``crates/`` of its repository) behind a
thin binding; their rules are the project's SPEC, the same as the ``sweeper`` command
line's.

Fronts on numpy arrays::

    >>> import numpy as np, sweeper
    >>> X = np.array([[10.0, 1.0], [9.0, 2.0], [12.0, 3.0], [10.0, 1.0]])
    >>> sweeper.pareto_front(X, ["max", "min"])   # sorted by the last column
    array([0, 3, 2])
    >>> sweeper.hypervolume(X, [0.0, 4.0], ["max", "min"])
    32.0
"""

from ._sweeper import (
    Config,
    ConfigError,
    Infeasible,
    Space,
    Study,
    Trial,
    Unsupported,
    __version__,
    config_schema,
    export,
    hypervolume,
    load_config,
    merge_fronts,
    nondominated_ranks,
    pareto_front,
    plot,
    read_reports,
    recommend,
    run,
    score,
    validate,
)

__all__ = [
    "Config",
    "ConfigError",
    "Infeasible",
    "Space",
    "Study",
    "Trial",
    "Unsupported",
    "__version__",
    "config_schema",
    "export",
    "hypervolume",
    "load_config",
    "merge_fronts",
    "nondominated_ranks",
    "pareto_front",
    "plot",
    "read_reports",
    "recommend",
    "run",
    "score",
    "validate",
]
