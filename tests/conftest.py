"""What every test run shares: a temporary directory of its own (DESIGN §6).

The system's temporary directory is shared with everything else on the machine (another
clone's ``make test``, say). A run's temporary files, its own and those of the processes
it starts (kernels, nbgrader, Chromium, JupyterLab, pip), go to a fresh folder under the
run's pytest base directory instead: ``TMPDIR`` points there, and so does this process's
:mod:`tempfile`.
"""

import tempfile

import pytest


@pytest.fixture(scope="session", autouse=True)
def run_tmpdir(tmp_path_factory):
    """The run's own temporary directory, for ``tempfile`` and for child processes."""
    tmp = tmp_path_factory.mktemp("tmp", numbered=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(tmp))
        patch.setattr(tempfile, "tempdir", str(tmp))
        yield tmp



@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """One headless Chromium per test process, shared by the browser test modules: a
    pytest worker that runs tests of both keeps it (Playwright's sync API runs one at a
    time). Offline but for 127.0.0.1 and the local copies of the CDN's files (chromium.py)."""
    from chromium import launch, require_chromium

    require_chromium()  # skips (fails under CI=true) where there is none
    with launch(tmp_path_factory.mktemp("cdn")) as chromium:
        yield chromium
