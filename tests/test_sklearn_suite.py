"""scikit-learn's own tests of the estimators lincls re-implements (``make sklearn``).

tests/sklearn_suite.py edits them out of the installed scikit-learn and says how; the
tests marked ``sklearn_suite`` run them (in one pytest run: collecting the files, which
hold some 3000 tests, takes most of the time). The generator's own checks are fast and
run with the package tests.
"""

import pytest
import sklearn_suite


@pytest.mark.sklearn_suite
def test_scikit_learns_tests_pass_on_lincls(tmp_path):
    sklearn_suite.generate(tmp_path)
    result = sklearn_suite.run(tmp_path, ["-q", "-rfE", "--tb=short"], capture_output=True,
                               text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-10_000:] + result.stderr[-3000:]
    assert " passed" in result.stdout.splitlines()[-1]


@pytest.mark.sklearn_suite
def test_a_deselected_name_that_matches_no_test_stops_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(sklearn_suite, "DESELECT",
                        {"a reason": ["test_perceptron.py::test_no_such_test"]})
    sklearn_suite.generate(tmp_path)
    result = sklearn_suite.run(tmp_path, ["-q", "test_perceptron.py"], capture_output=True,
                               text=True, timeout=600)
    assert result.returncode != 0
    assert "test_perceptron.py::test_no_such_test" in result.stdout + result.stderr


def test_every_edit_applies_to_the_installed_scikit_learn(tmp_path):
    sklearn_suite.generate(tmp_path)
    assert sorted(path.name for path in tmp_path.glob("test_*.py")) == sorted(sklearn_suite.FILES)
    assert all(reason and names for reason, names in sklearn_suite.DESELECT.items())


@pytest.mark.parametrize("old, count", [("a = 1", 2), ("b = 2", 0)])
def test_a_substitution_that_does_not_match_once_stops_the_generation(old, count, tmp_path,
                                                                      monkeypatch):
    source = tmp_path / "sklearn" / "tests" / "test_x.py"
    source.parent.mkdir(parents=True)
    source.write_text("a = 1\na = 1\n")
    monkeypatch.setattr(sklearn_suite, "FILES", {"test_x.py": ("tests/test_x.py", [(old, "")], "")})
    (tmp_path / "out").mkdir()
    with pytest.raises(RuntimeError, match=f"matches {count} times, not once"):
        sklearn_suite.generate(tmp_path / "out", tmp_path / "sklearn")
