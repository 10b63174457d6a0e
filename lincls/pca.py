"""Principal component analysis: the orthonormal projection that keeps the most variance.

Defined in chapter "Dimensionality reduction and PCA" (``book/pca.md``).

PCA translates the data by its mean and rotates it onto the eigenvectors of the
covariance matrix, sorted by decreasing eigenvalue (= variance along the axis). Keeping
the first k axes gives the k-dimensional projection with the largest variance and, at
the same time, the smallest squared reconstruction error.
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._blas import blas_threads_for

__all__ = ["PCA", "principal_axes", "sign_flip", "choose_k"]


def principal_axes(Xc):
    """Eigenvalues and eigenvectors of the covariance of centred data, largest first.

    Defined in chapter "Dimensionality reduction and PCA".

    Solves Σ a = λ a, eq. (pca-eigen), with the sample covariance
    Σ = Xcᵀ Xc / (n - 1) (the unbiased estimate, as scikit-learn uses; the
    proportions of variance do not depend on the factor).

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features), columns of mean zero

    Returns
    -------
    variances : ndarray of shape (n_features,)
        The eigenvalues λ₁ ≥ λ₂ ≥ ... ≥ 0.
    axes : ndarray of shape (n_features, n_features)
        Row j is the unit eigenvector a_j.

    Examples
    --------
    >>> Xc = np.array([[-2.0, 0.0], [2.0, 0.0], [0.0, 1.0], [0.0, -1.0]])   # centred
    >>> variances, axes = principal_axes(Xc)
    >>> variances.tolist(), np.abs(axes).tolist()
    ([2.6666666666666665, 0.6666666666666666], [[1.0, 0.0], [0.0, 1.0]])
    """
    cov = Xc.T @ Xc / (Xc.shape[0] - 1)
    variances, vectors = np.linalg.eigh(cov)  # eigh sorts ascending: reverse
    return np.clip(variances[::-1], 0.0, None), vectors[:, ::-1].T


def sign_flip(axes):
    """Make each axis point so that its entry of largest magnitude is positive.

    Defined in chapter "Dimensionality reduction and PCA".

    An eigenvector is defined only up to its sign; this fixes one (the convention of
    scikit-learn's ``svd_flip``), so that results are reproducible.

    Examples
    --------
    >>> sign_flip(np.array([[-1.0, 0.2], [0.5, -0.1]]))
    array([[ 1. , -0.2],
           [ 0.5, -0.1]])
    """
    biggest = np.argmax(np.abs(axes), axis=1)
    signs = np.sign(axes[np.arange(axes.shape[0]), biggest])
    signs[signs == 0] = 1.0
    return axes * signs[:, None]


def choose_k(variances, fraction):
    """The smallest k whose proportion of variance, eq. (pca-pov), exceeds ``fraction``.

    Defined in chapter "Dimensionality reduction and PCA".

    Examples
    --------
    >>> choose_k(np.array([5.0, 3.0, 1.0, 1.0]), 0.8)
    3
    """
    pov = np.cumsum(variances) / np.sum(variances)
    return int(min(np.searchsorted(pov, fraction, side="right") + 1, len(variances)))


class PCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis by the eigenvectors of the covariance matrix.

    Defined in chapter "Dimensionality reduction and PCA".

    The projection z = Aᵀ (x - μ) with A = [a₁, ..., a_k] (orthonormal, AᵀA = I)
    holding the k leading eigenvectors of the covariance matrix.

    Parameters
    ----------
    n_components : int, float or None, default=None
        How many components to keep. An int k in [1, min(n_samples, n_features)]; a
        float in (0, 1) keeps the smallest k whose proportion of variance exceeds it
        (e.g. 0.9 for "PoV > 0.9"); None keeps min(n_samples, n_features).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The principal axes a_j (rows), orthonormal, sorted by decreasing variance; the
        entry of largest magnitude of each is positive.
    explained_variance_ : ndarray of shape (n_components,)
        The variance λ_j of the data along each axis (the eigenvalues).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        λ_j / Σ_i λ_i, the proportion of variance of each component.
    mean_ : ndarray of shape (n_features,)
        The mean μ subtracted before projecting.
    n_components_ : int
        The number k of components kept.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Notes
    -----
    The covariance is the unbiased one, Xcᵀ Xc / (n - 1), as in scikit-learn, so
    ``explained_variance_`` agrees with :class:`sklearn.decomposition.PCA`. Forming
    the d × d covariance and diagonalising it costs O(n d² + d³), which is cheaper than
    a singular value decomposition of the n × d data when n ≫ d.

    References
    ----------
    .. [1] Pearson, K. (1901). On lines and planes of closest fit to systems of points
       in space. Philosophical Magazine 2(11), 559–572.
    .. [2] Hotelling, H. (1933). Analysis of a complex of statistical variables into
       principal components. Journal of Educational Psychology 24(6), 417–441.

    Examples
    --------
    >>> import numpy as np
    >>> from lincls.pca import PCA
    >>> X = np.array([[2.0, 1.0], [4.0, 2.0], [6.0, 3.0], [8.0, 4.0]])
    >>> pca = PCA(n_components=1).fit(X)
    >>> pca.components_.round(4)
    array([[0.8944, 0.4472]])
    >>> float(pca.explained_variance_ratio_[0])
    1.0
    >>> np.allclose(pca.inverse_transform(pca.transform(X)), X)
    True
    """

    def __init__(self, n_components=None):
        self.n_components = n_components

    def _check_n_components(self, n_samples, n_features):
        k = self.n_components
        largest = min(n_samples, n_features)
        if k is None:
            return largest
        if isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, bool):
            if not 1 <= k <= largest:
                raise ValueError(
                    f"n_components={k} must be between 1 and min(n_samples, n_features)="
                    f"{largest}."
                )
            return int(k)
        if isinstance(k, (numbers.Real, np.floating)) and not isinstance(k, bool):
            if not 0.0 < k < 1.0:
                raise ValueError(
                    f"A float n_components is a fraction of variance in (0, 1); got {k!r}."
                )
            return None  # decided from the variances
        raise ValueError(f"n_components must be an int, a float in (0, 1) or None; got {k!r}.")

    def fit(self, X, y=None):
        """Learn the mean and the principal axes of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        X = validate_data(self, X, dtype=np.float64)
        n_samples, n_features = X.shape
        if n_samples < 2:
            raise ValueError(f"PCA needs at least 2 samples to estimate a variance; got "
                             f"n_samples = {n_samples}.")
        k = self._check_n_components(n_samples, n_features)
        self.mean_ = X.mean(axis=0)
        with blas_threads_for(n_samples * n_features**2):
            variances, axes = principal_axes(X - self.mean_)
        keep = min(n_samples, n_features)
        variances, axes = variances[:keep], axes[:keep]
        total = variances.sum()
        ratio = variances / total if total > 0 else np.zeros_like(variances)
        if k is None:
            k = choose_k(variances, self.n_components) if total > 0 else 1
        self.n_components_ = k
        self.components_ = sign_flip(axes[:k])
        self.explained_variance_ = variances[:k]
        self.explained_variance_ratio_ = ratio[:k]
        self._n_features_out = k
        return self

    def transform(self, X):
        """Project onto the principal axes: z = Aᵀ (x - μ), eq. (pca-projection).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.mean_) @ self.components_.T

    def inverse_transform(self, Z):
        """Map projections back to input space: x̂ = μ + A z (the reconstruction).

        Parameters
        ----------
        Z : array-like of shape (n_samples, n_components)

        Returns
        -------
        X_hat : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.n_components_:
            raise ValueError(f"Z must have shape (n_samples, {self.n_components_}); got {Z.shape}.")
        return Z @ self.components_ + self.mean_
