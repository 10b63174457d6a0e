"""Tests of lincls.pca against scikit-learn's PCA and the closed forms of the chapter."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits, load_iris
from sklearn.decomposition import PCA as SkPCA
from sklearn.linear_model import Perceptron
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls.pca import PCA, choose_k, principal_axes, sign_flip


@parametrize_with_checks([PCA(), PCA(n_components=1)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data():
    rng = np.random.default_rng(0)
    return {
        "digits": load_digits().data,
        "iris": load_iris().data,
        "correlated": rng.standard_normal((300, 8)) @ rng.standard_normal((8, 8)) + 5.0,
        "wide": rng.standard_normal((10, 30)),
    }


@pytest.mark.parametrize("name", ["digits", "iris", "correlated", "wide"])
def test_matches_sklearn(name):
    X = _data()[name]
    ours, theirs = PCA().fit(X), SkPCA(svd_solver="full").fit(X)
    assert ours.n_components_ == theirs.n_components_
    scale = theirs.explained_variance_[0]
    np.testing.assert_allclose(ours.explained_variance_, theirs.explained_variance_,
                               rtol=1e-10, atol=1e-10 * scale)
    np.testing.assert_allclose(ours.explained_variance_ratio_,
                               theirs.explained_variance_ratio_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.mean_, theirs.mean_, rtol=1e-12, atol=1e-12)
    # components are defined (up to sign) where the eigenvalue is simple and non-zero
    lam = theirs.explained_variance_
    gaps = np.minimum(np.abs(np.diff(lam, prepend=np.inf)), np.abs(np.diff(lam, append=-np.inf)))
    good = (lam > 1e-8 * scale) & (gaps > 1e-6 * scale)
    dots = np.abs(np.sum(ours.components_[good] * theirs.components_[good], axis=1))
    np.testing.assert_allclose(dots, 1.0, atol=1e-8)


def test_float_n_components_is_proportion_of_variance():
    X = load_digits().data
    for fraction in (0.5, 0.9, 0.99):
        ours = PCA(n_components=fraction).fit(X)
        assert ours.n_components_ == SkPCA(n_components=fraction).fit(X).n_components_
        pov = np.cumsum(PCA().fit(X).explained_variance_ratio_)
        k = ours.n_components_
        assert pov[k - 1] > fraction and (k == 1 or pov[k - 2] <= fraction)


def test_sign_convention_is_deterministic():
    X = _data()["correlated"]
    comps = PCA().fit(X).components_
    biggest = comps[np.arange(len(comps)), np.argmax(np.abs(comps), axis=1)]
    assert np.all(biggest > 0)
    np.testing.assert_array_equal(sign_flip(-comps), comps)
    # refitting on a permutation of the samples gives the same axes
    perm = np.random.default_rng(1).permutation(len(X))
    np.testing.assert_allclose(PCA().fit(X[perm]).components_, comps, atol=1e-10)


def test_closed_form_on_a_line_and_an_ellipse():
    # points on the line x2 = x1 / 2: one component, all variance, direction (2, 1)/√5
    X = np.outer(np.arange(5.0), [2.0, 1.0])
    pca = PCA(n_components=1).fit(X)
    np.testing.assert_allclose(pca.components_, [[2 / np.sqrt(5), 1 / np.sqrt(5)]])
    np.testing.assert_allclose(pca.explained_variance_ratio_, [1.0])
    # axis-aligned: variances are the column variances, sorted
    X = np.array([[-3.0, -1.0], [-3.0, 1.0], [3.0, -1.0], [3.0, 1.0]])
    pca = PCA().fit(X)
    np.testing.assert_allclose(pca.explained_variance_, [12.0, 4.0 / 3.0])
    np.testing.assert_allclose(pca.components_, np.eye(2), atol=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 40), st.integers(1, 8), st.integers(0, 2**31 - 1))
def test_properties(n, d, seed):
    X = np.random.default_rng(seed).standard_normal((n, d)) * 3 + 1
    pca = PCA().fit(X)
    A = pca.components_
    np.testing.assert_allclose(A @ A.T, np.eye(len(A)), atol=1e-9)   # orthonormal rows
    assert np.all(np.diff(pca.explained_variance_) <= 1e-12 * (1 + pca.explained_variance_[0]))
    Z = pca.transform(X)
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-9 * (1 + np.abs(X).max()))
    np.testing.assert_allclose(Z.var(axis=0, ddof=1), pca.explained_variance_,
                               atol=1e-9 * (1 + pca.explained_variance_[0]))
    if len(A) == d:  # all components: perfect reconstruction
        np.testing.assert_allclose(pca.inverse_transform(Z), X, atol=1e-8)


def test_reconstruction_error_is_sum_of_discarded_variances():
    X = _data()["correlated"]
    full = PCA().fit(X)
    for k in (1, 3, 6):
        pca = PCA(n_components=k).fit(X)
        err = np.sum((X - pca.inverse_transform(pca.transform(X))) ** 2) / (len(X) - 1)
        np.testing.assert_allclose(err, full.explained_variance_[k:].sum(), rtol=1e-8)


def test_helpers():
    Xc = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    variances, axes = principal_axes(Xc)
    np.testing.assert_allclose(variances, [8 / 3, 2 / 3])
    np.testing.assert_allclose(np.abs(axes), [[0, 1], [1, 0]])
    assert choose_k(np.array([5.0, 3.0, 1.0, 1.0]), 0.75) == 2
    assert choose_k(np.array([5.0, 3.0, 1.0, 1.0]), 0.8) == 3


@pytest.mark.parametrize("bad", [0, 100, -1, 1.0, 0.0, 1.5, "all", True])
def test_bad_n_components(bad):
    with pytest.raises(ValueError, match="n_components"):
        PCA(n_components=bad).fit(_data()["iris"])


def test_bad_input():
    with pytest.raises(ValueError, match="2 samples"):
        PCA().fit([[1.0, 2.0]])
    with pytest.raises(ValueError):
        PCA().fit([[1.0, np.nan], [2.0, 3.0]])
    pca = PCA(n_components=2).fit(_data()["iris"])
    with pytest.raises(ValueError, match="shape"):
        pca.inverse_transform(np.zeros((3, 3)))
    with pytest.raises(ValueError):
        pca.transform(np.zeros((3, 2)))


def test_pipeline_with_perceptron_on_digits():
    # scikit-learn's Perceptron with these settings runs the textbook loop (lincls.perceptron
    # gives identical weights); PCA in front of it is an ordinary pipeline step.
    X, y = load_digits(return_X_y=True)
    keep = (y == 4) | (y == 9)
    X, y = X[keep], y[keep]
    clf = make_pipeline(PCA(n_components=10),
                        Perceptron(tol=None, shuffle=False, eta0=1.0, alpha=0, max_iter=50))
    clf.fit(X, y)
    assert clf.score(X, y) > 0.95
    assert clf[:-1].transform(X).shape == (len(X), 10)
