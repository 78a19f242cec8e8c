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
    sys.exit(code)


if __name__ == "__main__":
    main()
