"""`Session`: what srcflow keeps between calls (the devices' kernel threads, GPU contexts and
compiled kernels, and the sweep plans made so far), and the process-wide default session that
`src`, `apply`, `compress`, `run` and `graph` use when given none."""

from __future__ import annotations

import os
import threading
import weakref

from . import _core


class Session:
    """A reusable srcflow engine: calls made with it share their backends and plans.

    The first call on a session starts its kernel threads (on a GPU: its context, library
    handles and compiled kernels) and plans its sweep; later calls with the same shapes,
    options and budgets reuse both, so a loop of thousands of small calls pays microseconds
    each. Every call without ``session=`` uses one default session per process, made on first
    use, so most programs never need this class.

    Calls on one session take turns: a second Python thread calling while one runs waits for
    it (the GIL is released meanwhile; Ctrl-C still interrupts the wait). Threads that should
    compute at once each use a session of their own, and share the machine's cores.

    Use it as a context manager, or call `close()`, to give its threads and memory back.

    Notes
    -----
    Between calls a session holds its backends' threads and at most ``PLANS_KEPT`` plans (the
    task graphs of recent calls); it keeps no large buffers (srcflow's block cache gives them
    back when a call ends). `trim()` forgets the plans. In a process forked from the one that
    made it (multiprocessing's "fork" start method), a session makes new threads on first use;
    one that a call in another thread was using at the fork is a fresh session in the child
    (the child has no copy of that thread, so the call would never end there).

    Examples
    --------
    >>> import quimb.tensor as qtn, srcflow
    >>> U, psi = qtn.MPO_identity(10), qtn.MPS_rand_state(10, bond_dim=8)
    >>> with srcflow.Session() as session:
    ...     for step in range(4):
    ...         psi = srcflow.apply(U, psi, chi_out=8, seed=step, session=session)
    ...     stats = session.stats()
    >>> stats["plan_misses"], stats["plan_hits"]  # a plan per pattern of bonds, not per step
    (2, 2)
    """

    #: Plans a session keeps; the least recently used is forgotten past this many.
    PLANS_KEPT = 32

    def __init__(self) -> None:
        self._core = _core.Session()
        self._turn = threading.Lock()
        _sessions.add(self)

    def _renew_if_busy(self) -> None:
        """In a forked child: a fresh engine session and turn when a call held this one at the
        fork (the parent's engine session is kept, never dropped: its threads and GPU handles
        are the parent's)."""
        if self._turn.locked():
            _inherited.append(self._core)
            self._core = _core.Session()
            self._turn = threading.Lock()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "srcflow.Session(closed)"
        stats = self.stats()
        return f"srcflow.Session(backends={stats['backends']}, plans={stats['plans']})"

    @property
    def closed(self) -> bool:
        """True once `close()` was called."""
        return self._core.closed

    def close(self) -> None:
        """Gives the session's threads and plans back.

        Waits for a call under way first. Calls with the session afterwards raise
        ValueError; closing twice does nothing.

        Examples
        --------
        >>> import srcflow
        >>> session = srcflow.Session()
        >>> session.close()
        >>> session.closed
        True
        """
        with self._turn:
            self._core.close()

    def trim(self) -> None:
        """Forgets the plans kept and gives cached memory back; the threads stay.

        Examples
        --------
        >>> import srcflow
        >>> session = srcflow.Session()
        >>> session.trim()
        >>> session.stats()["plans"]
        0
        """
        with self._turn:
            self._core.trim()

    def stats(self) -> dict:
        """What the session holds, and the process's large buffers.

        Returns
        -------
        dict
            ``backends`` and ``plans`` kept; ``plan_hits`` and ``plan_misses``, the calls
            that found their plan kept and those that planned; and, for the whole process,
            ``live_bytes`` and ``cached_bytes``: large buffers (1 MiB and up) that srcflow's
            block cache has in use (output arrays you still hold among them) and keeps for
            reuse (none between calls).

        Examples
        --------
        >>> import srcflow
        >>> sorted(srcflow.Session().stats())
        ['backends', 'cached_bytes', 'live_bytes', 'plan_hits', 'plan_misses', 'plans']
        """
        backends, plans, hits, misses, live, cached = self._core.stats()
        return {
            "backends": backends,
            "plans": plans,
            "plan_hits": hits,
            "plan_misses": misses,
            "live_bytes": live,
            "cached_bytes": cached,
        }

    def _call(self, function, *args, **kwargs):
        """`function(*args, session=<the engine session>, **kwargs)`, once no other call runs
        on this session."""
        with self._turn:
            return function(*args, self._core, **kwargs)


_default: Session | None = None
_default_lock = threading.Lock()
# Every session alive, for the renewal of busy ones in a forked child.
_sessions: weakref.WeakSet[Session] = weakref.WeakSet()


def default_session() -> Session:
    """The process-wide session that calls without ``session=`` use.

    Made on first use, and made anew after `Session.close` or in a forked child.

    Returns
    -------
    Session
        The default session.

    Examples
    --------
    >>> import srcflow
    >>> srcflow.default_session() is srcflow.default_session()
    True
    """
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Session()
        return _default


# Default sessions and busy engine sessions inherited from a parent process: kept, never dropped,
# as dropping them would stop threads and free GPU handles that belong to the parent.
_inherited: list = []


def _after_fork_in_child() -> None:
    """After a fork: the child makes a default session of its own on first use (the parent's
    threads are not in it), and each session busy at the fork is renewed."""
    global _default, _default_lock
    if _default is not None:
        _inherited.append(_default)
    _default = None
    _default_lock = threading.Lock()
    for session in list(_sessions):
        session._renew_if_busy()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
