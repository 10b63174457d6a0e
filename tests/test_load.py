"""The load layer (``make load``): the homework layer and a chapter build pass while two
CPU-bound processes keep both cores of a CI machine busy.

Teachers run the suite on shared runners and laptops that do other work; a wait that a
busy machine can hit (a kernel's start, a cell) fails here rather than on their machine.
The busy processes are plain Python loops at the same priority as the tests.
"""

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from test_book_config import one_page_book

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.load

#: a page as a chapter is: lincls fitted, a figure, a number shown in the prose
CHAPTER = """# Under load

```{code-cell} ipython3
import matplotlib.pyplot as plt
from lincls.datasets import teacher_student
from lincls.perceptron import Perceptron

X, y, _ = teacher_student(200, 20, random_state=0)
clf = Perceptron(max_iter=50, random_state=0).fit(X, y)
prose = {"epochs": clf.n_iter_}
plt.plot(clf.history_["errors"])
plt.show()
```

The perceptron ran {eval}`prose['epochs']` epochs.
"""


@pytest.fixture
def two_busy_processes():
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield loops
    finally:
        for p in loops:
            p.kill()
            p.wait()


def busy(loops):
    """Both loops still running and each has used the CPU."""
    return all(p.poll() is None and psutil.Process(p.pid).cpu_times().user > 1 for p in loops)


def test_homework_layer_beside_two_busy_processes(two_busy_processes):
    """``make homework`` (nbval twice, side by side: four processes on two busy cores)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    result = subprocess.run(["make", "--no-print-directory", "homework"], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert busy(two_busy_processes)


def test_a_chapter_builds_beside_two_busy_processes(two_busy_processes, tmp_path):
    """A page built as the book builds a chapter (a kernel, lincls, a figure, {eval})."""
    result = one_page_book(tmp_path, CHAPTER)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    html = (tmp_path / "_build" / "html" / "book" / "index.html").read_text()
    assert "The perceptron ran" in html and "<img" in html
    assert "kernel (a warm start) CPU time" in result.stdout  # forked (booktools.warm)
    assert busy(two_busy_processes)
