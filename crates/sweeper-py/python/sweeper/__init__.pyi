"""Type stubs of the sweeper package (the extension module ``sweeper._sweeper``)."""

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Optional, Union

import numpy as np
import numpy.typing as npt

__version__: str

Direction = Literal["max", "min", "maximize", "minimize"]
Target = Literal[
    "throughput",
    "throughput_per_gpu",
    "throughput_per_user",
    "e2e_latency",
    "goodput",
    "goodput_per_gpu",
    "ttft",
    "min_gpus",
    "cost_per_mtok",
    "pareto",
]
"""A goal's ``target``: ``ttft`` and ``cost_per_mtok`` are minimized (the latter needs
``price_per_gpu_hour``); ``min_gpus`` needs ``min_goodput_rps`` and an SLA."""
Matrix = npt.ArrayLike
PathOrText = Union[str, "os.PathLike[str]"]
ConfigLike = Union["Config", PathOrText]
Candidate = dict[str, Any]
Report = Mapping[str, Union[float, int, str]]

class ConfigError(ValueError):
    """A sweep config that ``sweeper validate`` rejects; ``str(e)`` is the command's message."""

    path: Optional[str]
    """The key path of the offending value (``"goal.sla"``), None for I/O and syntax errors."""
    rule: str
    """The rule that fired (``"sla_missing"``, ``"unknown_key"``, ``"io"``, ...)."""
    line: Optional[int]
    """1-based line in the config text, when the parser knows it."""
    column: Optional[int]
    """1-based column in the config text, when the parser knows it."""
    errors: list[dict[str, Any]]
    """Every failure, in one pass as ``sweeper validate`` finds them (each failing block's
    first error, then what a run checks before its first trial: the search space, the
    evaluator's presets or program): ``message``, ``path``, ``rule``, ``line``, ``column``."""

class Infeasible(Exception):
    """Raise it from a ``run`` evaluator: the candidate is infeasible (the message says why)."""

class Unsupported(Exception):
    """Raise it from a ``run`` evaluator: the candidate's configuration is not supported."""

class Space:
    """A search space: the parameters a study searches."""

    @property
    def names(self) -> list[str]: ...
    def to_dict(self) -> dict[str, dict[str, Any]]:
        """The space in the config's syntax, e.g. ``{"x": {"float": [0.0, 1.0]}}``."""
    def __len__(self) -> int: ...

class Config:
    """A validated sweep config, from ``load_config``."""

    @property
    def target(self) -> Target: ...
    @property
    def pareto(self) -> bool: ...
    @property
    def objectives(self) -> list[tuple[str, Literal["max", "min"]]]: ...
    @property
    def metrics(self) -> list[tuple[str, Literal["max", "min"]]]:
        """The study's metrics: ``[("objective", "max")]`` for a scalar goal, one per objective
        for a pareto goal; under ``min_gpus``, ``[("used_gpus", "min"),
        ("goodput_request_throughput_rps", "max")]`` (the study's floor is on the second)."""
    @property
    def gpu_budget(self) -> int: ...
    @property
    def space(self) -> Space:
        """The sweep's search space (with ``kv_load_ratio`` when the workload searches it)."""
    @property
    def path(self) -> Optional[str]: ...
    def to_dict(self) -> dict[str, Any]:
        """The fully resolved config (every default written out)."""
    def to_yaml(self) -> str: ...
    def to_json(self) -> str: ...

def load_config(path_or_text: PathOrText) -> Config:
    """Reads and checks a sweep config (YAML or JSON) as ``sweeper validate`` does.

    A ``pathlib.Path`` is a path; a ``str`` is a path when it is one line naming an existing
    file or ending in ``.yaml``/``.yml``/``.json``, and config text otherwise. Raises one
    ``ConfigError`` naming every failure (a misspelt target, a misspelt workload key and an
    unknown GPU together), worded as ``sweeper validate`` words them."""

def validate(path_or_text: PathOrText) -> dict[str, Any]:
    """The checks of ``load_config``; returns the fully resolved config as a dict."""

class Trial:
    """One trial of a study (a snapshot)."""

    @property
    def id(self) -> int: ...
    @property
    def params(self) -> dict[str, Union[int, float, str]]: ...
    @property
    def state(self) -> Literal["pending", "completed", "infeasible"]: ...
    @property
    def values(self) -> Optional[dict[str, float]]: ...
    @property
    def reason(self) -> Optional[str]: ...

class Study:
    """A multi-metric ask/tell study.

    ``space``: a dict in the config's syntax (``{"x": {"float": [0, 1]}, "tp": {"values":
    [1, 2, 4]}}``), a ``Space`` or a ``Config``; ``metrics``: ``(name, "max" | "min")``
    pairs (a ``Config`` gives its goal's); ``algorithm``: ``"default"`` (GP-UCB-PE),
    ``"random"``, ``"quasi_random"`` or ``"grid"``; ``floor``: ``(metric, value)``, a
    constrained study of two metrics, the cost (``"min"``) and ``metric`` (``"max"``, which
    satisfies at ``value`` or more), that looks for the fewest cost that satisfies (a
    ``Config`` whose target is ``min_gpus`` gives ``("goodput_request_throughput_rps",
    min_goodput_rps)``)."""

    def __init__(
        self,
        space: Union[Mapping[str, Mapping[str, Any]], Space, Config],
        metrics: Optional[Sequence[tuple[str, Direction]]] = None,
        algorithm: str = "default",
        seed: int = 42,
        floor: Optional[tuple[str, float]] = None,
    ) -> None: ...
    MAX_SUGGEST: int
    """The most trials one ``suggest`` call of the default, random and quasi-random
    algorithms hands out (1,000)."""
    MAX_GRID_SUGGEST: int
    """The most trials one ``suggest`` call of the grid hands out (2**20, the largest grid)."""
    @property
    def max_suggest(self) -> int:
        """The most trials one ``suggest`` call of this study hands out."""
    def suggest(self, n: int = 1) -> list[Trial]:
        """Up to ``n`` new pending trials (fewer only when a finite space is used up).

        Raises ``ValueError`` when ``n`` exceeds ``max_suggest``: ask again for more.
        """
    def observe(self, trial: Union[int, Trial], values: Mapping[str, float]) -> None:
        """Completes a pending trial with every metric's value."""
    def observe_infeasible(self, trial: Union[int, Trial], reason: str) -> None:
        """Closes a pending trial that could not be evaluated or was over budget."""
    @property
    def trials(self) -> list[Trial]: ...
    def pareto_optimal_trials(self) -> list[Trial]: ...
    def best_trial(self) -> Optional[Trial]:
        """The completed trial best on the first metric; with a floor, the satisfying trial
        of the fewest cost (while none satisfies, the highest floored metric)."""
    @property
    def floor(self) -> Optional[tuple[str, float]]:
        """The floor ``(metric, value)``, or None."""
    @property
    def metrics(self) -> list[tuple[str, Literal["max", "min"]]]: ...
    @property
    def space(self) -> Space: ...
    @property
    def algorithm(self) -> str: ...
    def to_json(self) -> str:
        """The whole study as JSON text; ``Study.from_json`` continues it identically."""
    @staticmethod
    def from_json(text: str) -> "Study": ...
    def __len__(self) -> int: ...

def pareto_front(X: Matrix, directions: Sequence[Direction]) -> npt.NDArray[np.int64]:
    """Indices of the non-dominated rows of ``X`` (an ``(n, d)`` array), sorted by the last
    column ascending, ties by row index; every copy of a duplicate front row is kept.
    ``directions``: one ``"max"`` or ``"min"`` per column. A C-contiguous float64 array is
    read without a copy; other numeric layouts and dtypes are converted once. A NaN raises
    ``ValueError`` naming its row and column. The GIL is released while the kernel runs."""

def nondominated_ranks(X: Matrix, directions: Sequence[Direction]) -> npt.NDArray[np.int64]:
    """Per row of ``X`` its front number (0 = non-dominated, 1 = non-dominated once front 0
    is removed, ...)."""

def hypervolume(X: Matrix, ref: Sequence[float], directions: Sequence[Direction]) -> float:
    """The hypervolume dominated by the rows of ``X`` up to the reference point ``ref``."""

def merge_fronts(A: Matrix, B: Matrix, directions: Sequence[Direction]) -> npt.NDArray[np.int64]:
    """The front of the rows of ``A`` and ``B``: indices into their concatenation, ascending."""

def score(config: ConfigLike, reports: Iterable[Mapping[str, Any]]) -> list[Candidate]:
    """Scores ``[{"config": {...}, "report": {...}}, ...]`` as ``sweeper score`` does: the
    feasible candidates ranked (scalar goal) or their Pareto front (pareto goal). Each
    candidate: ``index``, ``config``, ``used_gpus``, ``score``, ``metrics``, for a pareto
    goal ``objectives``, and for a ``min_gpus`` goal ``satisfying`` (whether its goodput
    reached ``min_goodput_rps``; those rank first, fewest GPUs first). The goal's price is
    applied to ``cost_per_mtok``; with ``strict_sla`` the rows over a bound are dropped."""

InputFormat = Literal["reports", "vllm", "sglang", "genai-perf"]
"""What ``read_reports`` reads a file as: sweeper's reports (CSV, JSON Lines, a JSON array of
``{"config", "report"}``), ``vllm bench serve --save-result`` JSON, SGLang ``bench_serving
--output-file`` JSON Lines, or genai-perf's ``profile_export_genai_perf.json``."""

def read_reports(
    paths: Union[PathOrText, Sequence[PathOrText]],
    *,
    input_format: Optional[InputFormat] = None,
    map: Optional[Mapping[str, str]] = None,
    gpus: Optional[Union[float, str]] = None,
    per_user_from_tpot: bool = False,
    config: Optional[ConfigLike] = None,
) -> list[dict[str, dict[str, Any]]]:
    """The rows ``sweeper score`` reads from result files, read by the same reader, as the
    ``[{"config": {...}, "report": {...}}, ...]`` that ``score`` and ``recommend`` take::

        rows = sweeper.read_reports("sglang-runs.jsonl", gpus=2)
        front = sweeper.score("examples/serving/pareto.yaml", rows)

    ``paths``: one path or a list read as one table (shards). Each file's format is told
    from its content (``input_format`` says it instead): sweeper's reports, ``vllm bench
    serve --save-result``, SGLang ``bench_serving`` (its bare ``Infinity`` is infinity) or
    genai-perf. A benchmark's keys become the scorer's (``output_throughput`` →
    ``output_throughput_tok_s``, ``duration`` s → ``duration_ms``), its settings the config.
    ``map``: ``{FROM: TO}``, read FROM as TO (``--map``). ``gpus``: the GPU count of rows
    without ``gpu_hours``, a number or the key holding it (``--gpus``); it fills
    ``gpu_hours`` from the run's duration, or gives a row without one a nominal hour.
    ``per_user_from_tpot``: tok/s/user = 1000 / ``mean_tpot_ms`` in your own rows too.
    ``config``: its ``search_space.used_gpus`` rule counts a benchmark row's GPUs. The
    command line's notes are ``UserWarning``s; ``OSError`` when a file cannot be read,
    ``ValueError`` naming the file, line and key for bad content."""

def recommend(
    config: ConfigLike,
    source: Union[PathOrText, Iterable[Mapping[str, Any]]],
    rate: float,
    scale_replicas: bool = False,
    runner_ups: int = 3,
) -> dict[str, Any]:
    """The fewest-GPU configuration that serves ``rate`` requests a second under the
    config's SLA, as ``sweeper recommend --config CONFIG SOURCE --rate RATE --format json``
    answers (the same dict). ``source``: a sweep's output directory or its
    ``journal.jsonl`` (its feasible trials, re-scored under ``config``), or rows as
    ``score`` takes (those over the GPU budget or a strict SLA left out).
    ``scale_replicas``: k copies of a candidate serve k times its goodput with k times its
    GPUs (only when the evaluator is linear in replicas). ``outcome`` is ``"found"``
    (``best``, ``runner_ups``, ``scaled``, ``considered``) or ``"none_serves"``
    (``best_goodput``, ``failed_bounds``, ``scaled``, ``considered``); each pick has
    ``candidate``, ``goodput_rps``, ``copies``, ``gpus`` and ``margin``."""

def run(
    config: ConfigLike,
    evaluator: Optional[Callable[[dict[str, Any]], Report]] = None,
    *,
    out: Optional[PathOrText] = None,
    resume: bool = False,
) -> dict[str, Any]:
    """Runs a sweep as ``sweeper run`` does, with ``evaluator`` (``candidate dict -> report
    dict``; raise ``Infeasible`` / ``Unsupported``) called from ``parallel_evals`` worker
    threads, or the config's own evaluator. ``out=DIR`` journals and writes the result files;
    ``resume=True`` continues the journal in ``DIR``. Returns ``candidates``, ``evaluated``,
    ``trials``, ``tallies``, ``reasons``, ``pareto`` and ``objectives``. Ctrl-C stops the
    sweep (nothing new starts, running calls finish) and raises ``KeyboardInterrupt``;
    ``resume=True`` then goes on from the journal."""

def config_schema() -> str:
    """The JSON Schema (draft 2020-12) of a sweep config as a JSON string, the document
    ``sweeper schema`` prints: for editors and for ``jsonschema`` checks. ``load_config``
    stays the judge of what is valid."""

def export(
    result_or_dir: Union[PathOrText, Mapping[str, Any]],
    trial_ids: Iterable[int],
    out: PathOrText,
    *,
    api: Optional[Literal["v1beta1", "v1alpha1"]] = None,
    backend: Optional[Literal["vllm", "sglang", "trtllm"]] = None,
    gpus_per_node: Optional[int] = None,
    model: Optional[str] = None,
    image: Optional[str] = None,
    namespace: Optional[str] = None,
    allow_unmapped: bool = False,
) -> list[str]:
    """Writes ``out/trial-ID/`` for each trial as ``sweeper export --trial ID`` does:
    ``dgd.yaml`` (a Dynamo DynamoGraphDeployment whose GPUs sum to the trial's
    ``used_gpus``), ``launch.sh`` (engine launch commands) and ``candidate.json`` (the
    candidate, its report and objectives). ``result_or_dir`` is a sweep's output directory
    (``run(..., out=DIR)``), its result.json, or that file's content as a dict. Returns the
    folders. Raises ``ValueError`` naming the trial and the key for a candidate that cannot
    be exported (``allow_unmapped=True`` records unknown parameters as comments), and
    ``OSError`` when a file cannot be written. An argument left ``None`` comes from the
    sweep config's ``export:`` block, else its default (v1beta1, vllm, 8 GPUs a node); a
    model, image or namespace given nowhere is a placeholder named as such."""

PlotInput = Union[PathOrText, Mapping[str, Any], Sequence[Mapping[str, Any]]]

def plot(
    inputs: Union[PlotInput, Sequence[PlotInput]],
    out: Optional[PathOrText] = None,
    *,
    config: Optional[ConfigLike] = None,
    objectives: Optional[Union[str, Sequence[str]]] = None,
    label: Optional[Union[str, Sequence[str]]] = None,
    color_by: Optional[str] = None,
    scale: Optional[Union[str, Sequence[str]]] = None,
    title: Optional[str] = None,
    names: Optional[Sequence[str]] = None,
) -> str:
    """Draws a chart as ``sweeper plot`` does. ``inputs`` is a sweep (its output directory
    or result.json, or that file's content as a dict), a list of ``{"config": ...,
    "report": ...}`` rows scored under ``config`` (as ``score`` scores them), or a list of
    those to draw on one chart with a front each (named by ``names``, one per input, else
    the sweep's directory name; every tooltip starts with the name; the inputs must share
    their objectives). ``objectives`` picks and orders the axes (the last is x); ``label``
    writes parameters beside the front points (``"tp,max_batch_size"`` or a list);
    ``color_by`` colours one input's points by a parameter; ``scale`` is ``"log"``,
    ``"linear"``, ``"auto"`` or ``"NAME=log"`` (or a list). Returns the SVG text when
    ``out`` is None, else writes ``out`` (``.svg``, or ``.png`` for an image) and returns
    its path. Raises ``ValueError`` for inputs it cannot draw together (naming both
    objective lists), a ``names`` list of another length, ``color_by`` with several inputs
    and an ``out`` that is neither .svg nor .png."""
