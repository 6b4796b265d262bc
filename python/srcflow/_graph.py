"""`Graph`: the sweep graph of a call, as `srcflow.graph` shows it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    """One task of the graph.

    Attributes:
        op: What it does ("env", "sketch", "qr", "read", "spill", …).
        site: The site it works on.
        columns: The sketch columns it covers (start, end), or None.
        flops: Real floating-point operations.
        peak_bytes: Bytes alive at its peak.
        moved_bytes: Bytes it moves between tiers or files.
        lane: The lane it runs on.
        device: The device it runs on.
        step: Its position in the sweep (its priority).
    """

    op: str
    site: int
    columns: tuple[int, int] | None
    flops: float
    peak_bytes: int
    moved_bytes: int
    lane: str
    device: int
    step: int


@dataclass(frozen=True)
class Graph:
    """The tasks of a sweep and the plan's choices.

    Attributes:
        tasks: Every task.
        batch_cols: Sketch columns per environment task.
        tiers: Where each environment lives ("Device", "Host" or "Disk").
    """

    tasks: list[Task]
    batch_cols: int | None
    tiers: list[str] | None
    _dot: str

    @staticmethod
    def of(summary: dict, dot: str) -> Graph:
        """The graph of the engine's summary and DOT text."""
        tasks = [
            Task(**{**t, "columns": None if t["columns"] is None else tuple(t["columns"])})
            for t in summary["tasks"]
        ]
        return Graph(tasks, summary["batch_cols"], summary["tiers"], dot)

    def total_flops(self) -> float:
        """The real floating-point operations of every task, summed.

        Returns
        -------
        float
            The flops of the sweep.

        Examples
        --------
        >>> import quimb.tensor as qtn, srcflow
        >>> g = srcflow.graph(qtn.MPO_ham_heis(6), qtn.MPS_rand_state(6, 4), chi_out=4)
        >>> g.total_flops() > 0
        True
        """
        return sum(t.flops for t in self.tasks)

    def to_dot(self) -> str:
        """The graph in Graphviz's DOT language (``dot -Tsvg`` draws it).

        Returns
        -------
        str
            The DOT text: a node per task, an edge per value passed.

        Examples
        --------
        >>> import quimb.tensor as qtn, srcflow
        >>> g = srcflow.graph(qtn.MPO_ham_heis(6), qtn.MPS_rand_state(6, 4), chi_out=4)
        >>> g.to_dot().startswith("digraph")
        True
        """
        return self._dot
