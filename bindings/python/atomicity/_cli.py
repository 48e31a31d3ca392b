"""``python -m atomicity``: ``run`` checks a threaded Python program, ``check`` a trace file."""

from __future__ import annotations

import _thread
import argparse
import ctypes
import os
import signal
import sys
import threading
import traceback
import warnings
from types import FrameType
from typing import (TYPE_CHECKING, Any, Callable, List, NoReturn, Optional, Sequence,
                    Tuple)

from . import _lib
from .errors import Error, TraceWarning

if TYPE_CHECKING:
    from . import _recorder, _tracing
    from .session import Session

PROG = "python -m atomicity"

RUN_USAGE = """\
usage: %(prog)s run [--atomic MODULE:QUALNAME]... [-c CHECKER[:ARGS]]...
                  [--format text|json|sarif|html] [--report FILE] [--trace PATH]...
                  [--max-events N] [--max-objects N] [--backend settrace|monitoring]
                  [--] script.py [args] | -m MODULE [args]
""" % {"prog": PROG}

RUN_EPILOG = """\
The script runs as __main__ with sys.argv = [script.py, args...]; its output and exit status
are its own. Reports go to standard error in the text format, or to FILE with --report
(json, sarif and html need --report; '--report -' is standard output). Threads that are
still running when the script ends are waited for, as Python does at exit; daemon threads are
not, and what they do after that is not checked. The reports are also written before
os._exit() and before SIGTERM or SIGHUP (left at their default action) end the program; they
are lost on SIGKILL, SIGQUIT and fatal errors. Options after script.py belong to the
script; '--' ends the tool's options. '-m MODULE' runs a module as 'python -m' does (the
working directory first on sys.path; --atomic names its functions by the module's dotted
name).
"""

CHECK_USAGE = """\
usage: %(prog)s check [-c CHECKER[:ARGS]]... [--format text|json|sarif|html|dot]
                    [--report FILE] [--max-reports N] [--max-stored N] [--baseline OLD.json]
                    [--suppressions FILE] [--allow-empty] [-q] TRACE|-
       %(prog)s check --list-checkers
""" % {"prog": PROG}

CHECK_EPILOG = """\
Checks a trace file (STD or .atb; '-' reads standard input) as atomcheck does, with the same
outputs. Exit status: 0 no violation, 1 violations shown (not suppressed or in the
baseline), 2 usage or input error (including ill-formed events in the trace, and a trace
without events), 3 no violation found but some checker stopped early (INCOMPLETE or
DISABLED).
"""

USAGE = """\
usage: %(prog)s check [-c CHECKER[:ARGS]]... [--format text|json|sarif|html]
                    [--report FILE] [--max-reports N] TRACE
""" % {"prog": PROG}

USAGE = """\
usage: %(prog)s run [options] [--] script.py [args]   check a threaded Python program
       %(prog)s check [options] TRACE                 check a trace file (STD or .atb)
       %(prog)s run --help | check --help
""" % {"prog": PROG}

FORMATS = ("text", "json", "sarif", "html")
CHECK_FORMATS = FORMATS + ("dot",)


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _run_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG + " run", usage=RUN_USAGE[len("usage: "):], epilog=RUN_EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter, add_help=True,
                allow_abbrev=False)
    p.add_argument("--atomic", action="append", default=[], metavar="MODULE:QUALNAME",
                   help="each call of this function is a transaction (MODULE: the module's "
                        "dotted name, or the script's file name without .py)")
    p.add_argument("-c", "--checker", action="append", default=[], metavar="CHECKER[:ARGS]",
                   help="attach a checker (repeatable; default aerodrome)")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--report", metavar="FILE",
                   help="write the reports to FILE ('-': standard output)")
    p.add_argument("--trace", action="append", default=[], metavar="PATH",
                   help="also trace code in this file or below this directory (the standard "
                        "library and site-packages are not traced otherwise)")
    p.add_argument("--max-events", type=int, default=0, metavar="N",
                   help="stop recording after N events (0: no bound)")
    p.add_argument("--max-objects", type=int, default=_recorder_max_objects(), metavar="N",
                   help="stop recording when more than N objects that cannot be weakly "
                        "referenced are kept alive for their identity (0: no bound; "
                        "default %(default)s)")
    p.add_argument("--backend", choices=("settrace", "monitoring"),
                   help="how accesses are traced (default: monitoring where the "
                        "interpreter has it, else settrace)")
    return p


def _recorder_max_objects() -> int:
    from ._recorder import MAX_OBJECTS
    return int(MAX_OBJECTS)


def _check_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG + " check", usage=CHECK_USAGE[len("usage: "):], epilog=CHECK_EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    p.add_argument("-c", "--checker", action="append", default=[], metavar="CHECKER[:ARGS]",
                   help="attach a checker (repeatable; default aerodrome)")
    p.add_argument("--format", choices=CHECK_FORMATS, default="text")
    p.add_argument("--report", metavar="FILE",
                   help="write the output to FILE (default: standard output)")
    p.add_argument("--max-reports", type=int, default=-1, metavar="N",
                   help="show at most N reports per checker (counts stay exact)")
    p.add_argument("--max-stored", type=int, default=10000, metavar="N",
                   help="keep at most N distinct reports per checker (default 10000; 0 = no "
                        "limit); the others are only counted")
    p.add_argument("--baseline", metavar="OLD.json",
                   help="show only violations whose fingerprint is not in OLD.json (an "
                        "earlier --format json or sarif output)")
    p.add_argument("--suppressions", metavar="FILE",
                   help="leave out violations matched by the rules in FILE (atomic:, fn:, "
                        "file:, checker:, kind: lines)")
    p.add_argument("--allow-empty", action="store_true",
                   help="accept a trace without events (exit 0, not 2)")
    p.add_argument("-q", "--quiet", action="store_true", help="write no output")
    p.add_argument("--list-checkers", action="store_true", help="list the checkers")
    p.add_argument("trace", metavar="TRACE", nargs="?")
    return p


# Options of `run` that take a value (to find where the script's name is).
_RUN_VALUED = {"--atomic", "-c", "--checker", "--format", "--report", "--trace",
               "--max-events", "--max-objects", "--backend"}


def _split_run(argv: List[str]) -> Tuple[List[str], Optional[str], List[str], bool]:
    """(tool options, script or module, its args, whether it is a module): the script is the
    first word that is not an option or an option's value, or the word after '--'; ``-m
    MODULE`` names a module instead, as with ``python -m``."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            if i + 1 >= len(argv):
                raise _UsageError("no script after '--'")
            return argv[:i], argv[i + 1], argv[i + 2:], False
        if word == "-m":
            if i + 1 >= len(argv):
                raise _UsageError("-m needs a module name")
            return argv[:i], argv[i + 1], argv[i + 2:], True
        if word.startswith("-") and word != "-":
            if word in _RUN_VALUED:
                i += 2
            else:
                i += 1
            continue
        return argv[:i], word, argv[i + 1:], False
    return argv, None, [], False


def _module_file(module: str) -> Optional[Tuple[str, str]]:
    """(the file ``python -m MODULE`` runs, the dotted name of its module), or None: a package
    runs its ``__main__`` submodule. The working directory comes first on sys.path, as for
    ``python -m``."""
    import importlib.util
    if sys.path:
        sys.path[0] = os.getcwd()
    try:
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.submodule_search_locations is not None:
            module += ".__main__"
            spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None
    return spec.origin, module


def _say(message: str) -> None:
    sys.stderr.write("atomicity: %s\n" % message)
    sys.stderr.flush()


def _write(session: Session, fmt: str, report: Optional[str], input_name: str, tool: str,
           cut_short: Optional[str] = None, **options: Any) -> None:
    if report is None or report == "-":
        out = sys.stdout if report == "-" else sys.stderr
        out.flush()
        session.write_reports(getattr(out, "buffer", out), format=fmt, tool=tool,
                              input=input_name, cut_short=cut_short, **options)
        out.flush()
    else:
        session.write_reports(report, format=fmt, tool=tool, input=input_name,
                              cut_short=cut_short, **options)


def _status_of(session: Session) -> int:
    if any(not s.complete for s in session.status) and not session.reports:
        return 3
    return 1 if session.reports else 0


def main(argv: Optional[List[str]] = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "run":
            return run(rest)
        if command == "check":
            return check(rest)
        raise _UsageError("unknown command %r (run or check)" % command)
    except _UsageError as exc:
        sys.stderr.write(USAGE if command not in ("run", "check") else
                         RUN_USAGE if command == "run" else CHECK_USAGE)
        _say(str(exc))
        return 2


# Checkers that can also take a lock block outside transactions for a unit of atomicity.
_LOCK_BLOCK_CHECKERS = ("commit-node", "block")


def _declared_only(spec: str) -> str:
    """The spec to attach for a run: the transactions of a program are the ones it declares
    (--atomic, atomicity.atomic), so commit-node and block get lock_blocks=no unless the spec
    says otherwise (as libatomicity-rt does)."""
    name, _, rest = spec.partition(":")
    if name not in _LOCK_BLOCK_CHECKERS or "lock_blocks" in rest:
        return spec
    return "%s:%s%slock_blocks=no" % (name, rest, "," if rest else "")


class _CheckerHead(ctypes.Structure):
    """The first members of ``struct atom_checker`` (atomicity/sys/checker.h), which are
    pinned: enough to read a built-in checker's name and summary."""

    _fields_ = [("abi_version", ctypes.c_uint32), ("event_mask", ctypes.c_uint32),
                ("name", ctypes.c_char_p), ("summary", ctypes.c_char_p)]


def _list_checkers() -> int:
    """The library's built-in checkers (atom_checker_builtin), one line each: name and
    summary."""
    fn = _lib.load().cdll.atom_checker_builtin
    fn.restype = ctypes.POINTER(_CheckerHead)
    fn.argtypes = (ctypes.c_size_t,)
    i = 0
    while True:
        vt = fn(i)
        if not vt:
            return 0
        head = vt.contents
        sys.stdout.write("%-14s %s\n" % (_lib.text(head.name),
                                          _lib.text(head.summary) if head.summary else ""))
        i += 1


def check(argv: List[str]) -> int:
    """``check TRACE``: atomcheck from Python. Status: 0 no violation, 1 violations shown,
    3 a checker stopped early and found nothing, 2 errors, ill-formed events and empty
    traces."""
    args = _check_parser().parse_args(argv)
    if args.list_checkers:
        return _list_checkers()
    if args.trace is None:
        raise _UsageError("no trace to check")
    if args.max_reports < -1 or args.max_stored < 0:
        raise _UsageError("--max-reports and --max-stored take a number >= 0")
    from .session import Session, Suppressions, read_baseline
    stdin = args.trace == "-"
    name = "<stdin>" if stdin else args.trace   # as the trace reader names standard input
    suppressions = None
    baseline: List[int] = []
    try:
        if args.baseline is not None:
            with open(args.baseline, "rb") as f:
                baseline = read_baseline(f.read())
        if args.suppressions is not None:
            with open(args.suppressions, "rb") as f:
                text = f.read()
            try:
                suppressions = Suppressions(text)
            except Error as exc:
                _say("%s: %s" % (args.suppressions, exc))
                return 2
        session = Session(args.checker or ["aerodrome"], max_reports=0,
                          max_reports_per_checker=args.max_stored)
    except Error as exc:
        _say(str(exc))
        return 2
    except OSError as exc:
        _say("%s: %s" % (exc.filename, exc.strerror or exc))
        return 2
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TraceWarning)
            try:
                data = sys.stdin.buffer.read() if stdin else None
                session._feed_trace(name, False, data)
                events = int(session.stats()["events"]) + int(session.stats()["rejected"])
                if events == 0 and not args.allow_empty:
                    _say("%s: no events read (--allow-empty accepts an empty trace)" % name)
                    return 2
                session.finish()
            except Error as exc:
                # A checker that stopped (a limit, out of memory) leaves partial results that
                # the output marks; any other failure is an error.
                if exc.name not in ("ATOM_ENOMEM", "ATOM_ELIMIT"):
                    _say(str(exc))
                    return 2
            except OSError as exc:
                _say("%s: %s" % (name, exc.strerror or exc))
                return 2
        rejected = [w for w in caught if issubclass(w.category, TraceWarning)]
        for w in rejected:
            _say(str(w.message))
        if not args.quiet:
            try:
                _write(session, args.format, "-" if args.report is None else args.report,
                       args.trace, "atomicity check", max_reports=max(0, args.max_reports),
                       show_reports=args.max_reports != 0, suppressions=suppressions,
                       baseline=baseline)
            except (Error, OSError) as exc:
                _say("cannot write the results: %s" % exc)
                return 2
        if rejected:
            return 2
        if session.shown_violations(suppressions, baseline):
            return 1
        return 3 if any(not s.complete for s in session.status) else 0
    finally:
        session.close()
        if suppressions is not None:
            suppressions.close()


def run(argv: List[str]) -> int:
    """``run script.py``: run the script with its accesses, locks and threads recorded."""
    options, script, script_args, is_module = _split_run(argv)
    parser = _run_parser()
    args = parser.parse_args(options)
    if script is None:
        raise _UsageError("no script to run")
    if args.format != "text" and args.report is None:
        raise _UsageError("--format %s needs --report FILE ('-' for standard output)"
                          % args.format)
    if args.max_events < 0:
        raise _UsageError("--max-events must be 0 or more")
    if args.max_objects < 0:
        raise _UsageError("--max-objects must be 0 or more")
    module: Optional[str] = None
    if is_module:
        found = _module_file(script)
        if found is None:
            _say("no module named %s" % script)
            return 2
        script, module = found
    elif not os.path.exists(script):
        _say("cannot open %s: No such file or directory" % script)
        return 2
    if args.backend:
        os.environ["ATOMICITY_PY_BACKEND"] = args.backend
    try:
        from . import _tracing
    except ImportError as exc:
        _say("the access tracer (atomicity._tracing) cannot be imported: %s" % exc)
        return 2

    from . import _recorder
    from . import _sync  # noqa: F401
    from .session import Session
    try:
        # Made before the locks are patched: the session's own lock must be a real one.
        session = Session([_declared_only(c) for c in args.checker or ["aerodrome"]],
                          max_reports=0)
        recorder = _recorder.Recorder(session, script=script, atomic=args.atomic,
                                      trace=args.trace, max_events=args.max_events,
                                      max_objects=args.max_objects, script_module=module)
    except (Error, ValueError) as exc:
        _say(str(exc))
        return 2
    tracer = _tracing.Tracer(recorder)

    name = script if module is None else "-m " + module

    def finish() -> None:
        _finish_run(args, name, session, recorder, tracer)

    ending = _Ending(finish)
    status = _run_script(script, script_args, recorder, tracer, ending, module)
    ending.run_once()
    ending.uninstall()  # a signal that came while the reports were written kills now
    return status


def _finish_run(args: argparse.Namespace, script: str, session: Session, recorder: _recorder.Recorder,
                tracer: _tracing.Tracer) -> None:
    """Stop recording, finish the session, write the reports and the run's warnings, close
    the session. Runs once (_Ending): after the script, or before an os._exit or a fatal
    signal ends the process."""
    # First: other threads may still run (os._exit from a thread, a signal, daemon threads);
    # what they do from now on is not recorded.
    recorder.recording = False
    tracer.stop()
    try:
        recorder.close()
    except Error as exc:
        _say("checking failed: %s" % exc)
    # A bound that dropped events marks every output: a verdict on the start of the run must
    # not read as one on the whole run. (Events the session refused are the rejected count.)
    cut_short = recorder.cut_reason if recorder.cut_short else None
    try:
        _write(session, args.format, args.report, script, "python -m atomicity run", cut_short)
    except (Error, OSError) as exc:
        _say("cannot write the reports: %s" % exc)
    if cut_short:
        _say("%s: only the start of the run was checked" % cut_short)
    if recorder.rejected:
        _say("%d recorded events were not a possible execution and were left out (first: %s)"
             % (recorder.rejected, recorder.reject_messages[0] if recorder.reject_messages
                else "?"))
    for spec in args.atomic:
        if spec not in recorder.atomic_matched:
            _say("--atomic %s: no such function ran" % spec)
    session.close()


# Signals whose default action ends the process and that a program is commonly stopped with:
# the reports are written first. Not SIGQUIT (its point is a core dump of the process as it
# is), SIGKILL and SIGSTOP (cannot be caught), SIGINT (Python turns it into
# KeyboardInterrupt, which the run handles as an exception), nor fatal errors (SIGSEGV...:
# the interpreter's state cannot be trusted then).
_FATAL_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                       if hasattr(signal, name))


class _Ending:
    """Makes sure the reports are written once, however the program ends: after the script
    returns (run_once), before os._exit (wrapped while the run lasts: the real one follows,
    with the program's status) and before SIGTERM / SIGHUP kill the process when the program
    left them at their default action (our handler writes the reports, puts the default
    back and sends the signal again: the status is the signal's, as without the tool). A
    handler the program installs replaces ours, and its behaviour wins. Only the process that
    started the run writes: a fork() child that exits or is killed does not."""

    def __init__(self, finish: Callable[[], None]) -> None:
        self._finish = finish
        self._lock = _thread.allocate_lock()  # not threading's: those are patched in the run
        self._pid = os.getpid()
        self._owner: Optional[int] = None     # thread writing the reports, while it does
        self._done = False
        self._pending: List[int] = []          # signals that came while writing
        self._handled: List[int] = []          # signals we installed a handler for
        self._real_exit = os._exit
        self._installed = False

    def install(self) -> None:
        os._exit = self._exit
        self._installed = True
        if threading.current_thread() is not threading.main_thread():
            return  # signal.signal works only there
        for signum in _FATAL_SIGNALS:
            try:
                if signal.getsignal(signum) == signal.SIG_DFL:
                    signal.signal(signum, self._on_signal)
                    self._handled.append(signum)
            except (OSError, ValueError):
                pass

    def uninstall(self) -> None:
        """Put os._exit and the default actions back; re-send a signal that came while the
        reports were being written."""
        if not self._installed:
            return
        self._installed = False
        if os._exit == self._exit:
            os._exit = self._real_exit
        for signum in self._handled:
            try:
                if signal.getsignal(signum) == self._on_signal:
                    signal.signal(signum, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        self._handled = []
        for signum in self._pending:
            os.kill(os.getpid(), signum)

    def run_once(self) -> None:
        if os.getpid() != self._pid or self._owner == _thread.get_ident():
            return
        with self._lock:
            if self._done:
                return
            self._owner = _thread.get_ident()
            try:
                self._finish()
            finally:
                self._done = True
                self._owner = None

    def _exit(self, status: int) -> NoReturn:
        try:
            self.run_once()
        finally:
            self._real_exit(status)

    def _on_signal(self, signum: int, _frame: Optional[FrameType]) -> None:
        if self._owner == _thread.get_ident():
            # Arrived in the middle of writing the reports (in this thread): finish first.
            self._pending.append(signum)
            return
        self.run_once()
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        self._real_exit(128 + signum)  # not reached: the default action ends the process


def _run_script(script: str, script_args: Sequence[str], recorder: _recorder.Recorder,
                tracer: _tracing.Tracer, ending: _Ending, module: Optional[str] = None) -> int:
    """Run the script (or ``module``, whose file ``script`` is) as __main__ with everything
    hooked; returns its exit status."""
    import runpy
    from . import _sync
    from . import _recorder

    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script] + list(script_args)
    # python -m puts the working directory first on sys.path, python script.py its directory.
    script_dir = os.getcwd() if module is not None else os.path.dirname(os.path.abspath(script))
    if sys.path:
        sys.path[0] = script_dir
    else:
        sys.path.insert(0, script_dir)
    status = 0
    _recorder.activate(recorder)
    _sync.patch()
    tracer.start()
    ending.install()
    try:
        try:
            if module is not None:
                runpy.run_module(module, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            status = _exit_status(exc.code)
        except KeyboardInterrupt:
            _print_exception(script)
            status = 130
        except BaseException:
            _print_exception(script)
            status = 1
        _wait_for_threads()
    finally:
        tracer.stop()
        _sync.restore()
        recorder.recording = False
        _recorder.activate(None)
        sys.argv = saved_argv
        if saved_path0 is not None and sys.path:
            sys.path[0] = saved_path0
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return status


def _exit_status(code: object) -> int:
    """What Python makes of SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code
    try:
        sys.stderr.write("%s\n" % (code,))
    except Exception:
        pass
    return 1


def _print_exception(script: str) -> None:
    """The traceback as Python prints it, without the frames of this tool."""
    kind, value, tb = sys.exc_info()
    target = os.path.normcase(os.path.abspath(script))
    first = tb
    while first is not None:
        name = first.tb_frame.f_code.co_filename
        if os.path.normcase(os.path.abspath(name)) == target:
            break
        first = first.tb_next
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    traceback.print_exception(kind, value, first if first is not None else tb)
    sys.stderr.flush()


def _wait_for_threads() -> None:
    """Join the non-daemon threads still running, as the interpreter does at exit."""
    me = threading.current_thread()
    while True:
        pending = [t for t in threading.enumerate()
                   if t is not me and not t.daemon and t.is_alive()]
        if not pending:
            return
        for t in pending:
            t.join()
