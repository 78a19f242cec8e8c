"""The `audit` command, for the `audit` script and `python -m auditor`. The rest of the
package is imported inside `main`: a Ctrl-C while it loads ends as one during the run
does, with one line and exit 4, not a traceback."""

import sys

from auditor.errors import ExitCode


def main() -> None:
    try:
        from auditor.cli import run_command
        from auditor.containment.layout import fix_child_address_layout
        from auditor.containment.scratch import use_run_folder

        use_run_folder()
        fix_child_address_layout()
        code = run_command()
    except KeyboardInterrupt:
        sys.stderr.write("audit: interrupted; no report written\n")
        code = ExitCode.INCOMPLETE
    _forget_handled_interrupts()
    sys.exit(code)


def _forget_handled_interrupts() -> None:
    """Under `python -m`, CPython ends the process by SIGINT, whatever the exit code,
    once a KeyboardInterrupt has left an `exec` or `eval` of a string (as the methods
    `dataclasses` builds are made), even an interrupt caught afterwards. Each such
    evaluation first clears that mark: by now every interrupt has been handled."""
    exec("")


if __name__ == "__main__":
    main()
