"""The run's temporary files stay in the run (tests/conftest.py, DESIGN §6)."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def test_temporary_files_stay_in_the_run(run_tmpdir, tmp_path):
    """tempfile, here and in a child process, gives the run's own directory, which lies
    beside the tests' tmp_path folders, not the system's temporary directory."""
    assert tempfile.gettempdir() == str(run_tmpdir) == os.environ["TMPDIR"]
    assert run_tmpdir.parent == tmp_path.parent  # pytest's base directory of the run
    with tempfile.TemporaryDirectory() as scratch:
        assert Path(scratch).parent == run_tmpdir
    child = subprocess.run([sys.executable, "-c", "import tempfile; print(tempfile.mkdtemp())"],
                           capture_output=True, text=True, check=True)
    assert Path(child.stdout.strip()).parent == run_tmpdir
