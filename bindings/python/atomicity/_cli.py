"""``python -m atomicity``: ``run`` checks a threaded Python program, ``check`` a trace file."""

import argparse
import os
import sys
import threading
import traceback
import warnings

from . import _lib
from .errors import Error, TraceWarning

PROG = "python -m atomicity"

RUN_USAGE = """\
usage: %(prog)s run [--atomic MODULE:QUALNAME]... [-c CHECKER[:ARGS]]...
                  [--format text|json|sarif|html] [--report FILE] [--trace PATH]...
                  [--max-events N] [--max-objects N] [--backend settrace|monitoring]
                  [--] script.py [args]
""" % {"prog": PROG}

RUN_EPILOG = """\
The script runs as __main__ with sys.argv = [script.py, args...]; its output and exit status
are its own. Reports go to standard error in the text format, or to FILE with --report
(json, sarif and html need --report; '--report -' is standard output). Threads that are
still running when the script ends are waited for, as Python does at exit; daemon threads are
not, and what they do after that is not checked. Options after script.py belong to the
script; '--' ends the tool's options.
"""

CHECK_USAGE = """\
usage: %(prog)s check [-c CHECKER[:ARGS]]... [--format text|json|sarif|html]
                    [--report FILE] [--max-reports N] TRACE
""" % {"prog": PROG}

USAGE = """\
usage: %(prog)s run [options] [--] script.py [args]   check a threaded Python program
       %(prog)s check [options] TRACE                 check a trace file (STD or .atb)
       %(prog)s run --help | check --help
""" % {"prog": PROG}

FORMATS = ("text", "json", "sarif", "html")


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


def _run_parser():
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


def _recorder_max_objects():
    from ._recorder import MAX_OBJECTS
    return MAX_OBJECTS


def _check_parser():
    p = _Parser(prog=PROG + " check", usage=CHECK_USAGE[len("usage: "):], allow_abbrev=False)
    p.add_argument("-c", "--checker", action="append", default=[], metavar="CHECKER[:ARGS]")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--report", metavar="FILE")
    p.add_argument("--max-reports", type=int, default=0, metavar="N")
    p.add_argument("trace", metavar="TRACE")
    return p


# Options of `run` that take a value (to find where the script's name is).
_RUN_VALUED = {"--atomic", "-c", "--checker", "--format", "--report", "--trace",
               "--max-events", "--max-objects", "--backend"}


def _split_run(argv):
    """(tool options, script, script args): the script is the first word that is not an
    option or an option's value, or the word after '--'."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            if i + 1 >= len(argv):
                raise _UsageError("no script after '--'")
            return argv[:i], argv[i + 1], argv[i + 2:]
        if word.startswith("-") and word != "-":
            if word in _RUN_VALUED:
                i += 2
            else:
                i += 1
            continue
        return argv[:i], word, argv[i + 1:]
    return argv, None, []


def _say(message):
    sys.stderr.write("atomicity: %s\n" % message)
    sys.stderr.flush()


def _write(session, fmt, report, input_name, tool, cut_short=None):
    if report is None or report == "-":
        out = sys.stdout if report == "-" else sys.stderr
        out.flush()
        session.write_reports(getattr(out, "buffer", out), format=fmt, tool=tool,
                              input=input_name, cut_short=cut_short)
        out.flush()
    else:
        session.write_reports(report, format=fmt, tool=tool, input=input_name,
                              cut_short=cut_short)


def _status_of(session):
    if any(not s.complete for s in session.status) and not session.reports:
        return 3
    return 1 if session.reports else 0


def main(argv=None):
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


def _declared_only(spec):
    """The spec to attach for a run: the transactions of a program are the ones it declares
    (--atomic, atomicity.atomic), so commit-node and block get lock_blocks=no unless the spec
    says otherwise (as libatomicity-rt does)."""
    name, _, rest = spec.partition(":")
    if name not in _LOCK_BLOCK_CHECKERS or "lock_blocks" in rest:
        return spec
    return "%s:%s%slock_blocks=no" % (name, rest, "," if rest else "")


def check(argv):
    """``check TRACE``: atomcheck from Python. Status: 0 no violation, 1 violations, 3 a
    checker stopped early and found nothing, 2 errors and ill-formed events."""
    args = _check_parser().parse_args(argv)
    if args.format != "text" and args.report is None:
        args.report = "-"
    from .session import Session
    try:
        session = Session(args.checker or ["aerodrome"], max_reports=0)
    except Error as exc:
        _say(str(exc))
        return 2
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TraceWarning)
            try:
                session._feed_trace(args.trace, False)
                session.finish()
            except Error as exc:
                _say(str(exc))
                return 2
            except OSError as exc:
                _say("%s: %s" % (args.trace, exc.strerror or exc))
                return 2
        rejected = [w for w in caught if issubclass(w.category, TraceWarning)]
        for w in rejected:
            _say(str(w.message))
        try:
            _write(session, args.format, "-" if args.report is None else args.report,
                   args.trace, "atomicity check")
        except (Error, OSError) as exc:
            _say("cannot write the reports: %s" % exc)
            return 2
        return 2 if rejected else _status_of(session)
    finally:
        session.close()


def run(argv):
    """``run script.py``: run the script with its accesses, locks and threads recorded."""
    options, script, script_args = _split_run(argv)
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
    if not os.path.exists(script):
        _say("cannot open %s: No such file or directory" % script)
        return 2
    if args.backend:
        os.environ["ATOMICITY_PY_BACKEND"] = args.backend
    try:
        from . import _tracing
    except ImportError as exc:
        _say("the access tracer (atomicity._tracing) cannot be imported: %s" % exc)
        return 2

    from . import _recorder, _sync
    from .session import Session
    try:
        # Made before the locks are patched: the session's own lock must be a real one.
        session = Session([_declared_only(c) for c in args.checker or ["aerodrome"]],
                          max_reports=0)
        recorder = _recorder.Recorder(session, script=script, atomic=args.atomic,
                                      trace=args.trace, max_events=args.max_events,
                                      max_objects=args.max_objects)
    except (Error, ValueError) as exc:
        _say(str(exc))
        return 2
    tracer = _tracing.Tracer(recorder)

    status = _run_script(script, script_args, recorder, tracer)

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
    return status


def _run_script(script, script_args, recorder, tracer):
    """Run the script as __main__ with everything hooked; returns its exit status."""
    import runpy
    from . import _recorder, _sync

    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script] + list(script_args)
    script_dir = os.path.dirname(os.path.abspath(script))
    if sys.path:
        sys.path[0] = script_dir
    else:
        sys.path.insert(0, script_dir)
    status = 0
    _recorder.activate(recorder)
    _sync.patch()
    tracer.start()
    try:
        try:
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


def _exit_status(code):
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


def _print_exception(script):
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


def _wait_for_threads():
    """Join the non-daemon threads still running, as the interpreter does at exit."""
    me = threading.current_thread()
    while True:
        pending = [t for t in threading.enumerate()
                   if t is not me and not t.daemon and t.is_alive()]
        if not pending:
            return
        for t in pending:
            t.join()
