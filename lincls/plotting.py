"""Plots the book draws again and again.

Defined in chapter "Binary classification" (``book/binary_classification.md``).
"""

from html import escape

import matplotlib.pyplot as plt
import numpy as np
from cycler import cycler
from matplotlib.colors import ListedColormap

__all__ = ["plot_decision_regions", "use_book_style", "animation_html", "BOOK_COLORS",
           "CLASS_COLORS"]

#: The Okabe–Ito palette, told apart with every common colour-vision deficiency
#: (Okabe & Ito, "Color Universal Design", 2008); yellow is left out, it is too pale on white.
BOOK_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
#: A line style for each colour, so that lines differ by more than colour.
_LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (1, 3)))

#: Colours of the classes in the order of ``classes_``: the negative class is vermillion,
#: the positive class blue, as in the figures of the book; further classes follow.
CLASS_COLORS = ("#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
#: Each class also has its own marker: meaning never rests on colour alone.
_MARKERS = ("o", "s", "^", "D", "v", "P")


def use_book_style(rc=None):
    """Set the book's plot style; every chapter calls it in its first code cell.

    Defined in chapter "Binary classification".

    Colours come from the colour-blind-safe :data:`BOOK_COLORS` (``"C0"``, ``"C1"``, ...
    name them), each paired with its own line style, and figures are saved on an opaque
    white background, so that they stay readable in the website's dark mode (Jupyter's
    inline backend saves them transparent). ``rc`` holds a chapter's own settings
    (figure size, dpi), applied last.

    Examples
    --------
    >>> use_book_style({"figure.dpi": 80})
    >>> plt.rcParams["savefig.facecolor"]
    'white'
    """
    plt.rcParams.update({
        "axes.prop_cycle": cycler(color=BOOK_COLORS) + cycler(linestyle=_LINESTYLES),
        "figure.facecolor": "white",
        "savefig.facecolor": "white",
        "savefig.transparent": False,
        "legend.framealpha": 0.9,
        **(rc or {}),
    })


def animation_html(animation, alt, **options):
    """A matplotlib animation as JavaScript HTML (``to_jshtml``) that screen readers can use.

    Defined in chapter "The perceptron".

    The frames get the alternative text ``alt`` (what the animation shows) and the frame
    slider a label; matplotlib writes neither.

    Parameters
    ----------
    animation : matplotlib.animation.Animation
    alt : str
        What the animation shows, in a sentence.
    **options
        Passed to ``animation.to_jshtml`` (``fps``, ``default_mode``, ...).

    Returns
    -------
    html : str

    Examples
    --------
    >>> from matplotlib.animation import FuncAnimation
    >>> fig, ax = plt.subplots()
    >>> movie = FuncAnimation(fig, lambda k: ax.plot([0, k]), frames=2)
    >>> html = animation_html(movie, "A line that grows.", fps=1)
    >>> plt.close(fig); 'alt="A line that grows."' in html
    True
    """
    if not isinstance(alt, str) or not alt.strip():
        raise ValueError("alt must describe what the animation shows.")
    html = animation.to_jshtml(**options)
    labels = [("<img id=", "alt", alt), ('<input id="_anim_slider', "aria-label", "Frame")]
    for tag, attribute, text in labels:
        if html.count(tag) != 1:
            raise ValueError(f"unexpected to_jshtml output: {tag!r} found {html.count(tag)} times")
        head, rest = tag.split(" ", 1)
        html = html.replace(tag, f'{head} {attribute}="{escape(text.strip())}" {rest}', 1)
    return html


def plot_decision_regions(X, y, clf, ax=None, *, resolution=300, padding=0.5, limits=None,
                          mark_errors=True, show_normal=False, legend=True, alpha=0.2):
    """Draw the regions a classifier assigns to each class, and the samples on top.

    Defined in chapter "Binary classification".

    Parameters
    ----------
    X : array-like of shape (n_samples, 2)
        Two features, the plane that is drawn.
    y : array-like of shape (n_samples,)
        True labels of any type (±1, 0/1, strings, ...).
    clf : object with ``predict``
        A fitted classifier; ``classes_`` fixes the colour order when it has one.
    ax : matplotlib Axes, optional
        Where to draw; the current axes by default.
    resolution : int, default=300
        Grid points per axis.
    padding : float, default=0.5
        Margin around the data, in data units.
    limits : ((x_min, x_max), (y_min, y_max)), optional
        The area to draw instead of the data's extent plus ``padding``; use it to draw
        several panels (say, training and test set) over the same area.
    mark_errors : bool, default=True
        Ring the samples that ``clf`` misclassifies in black.
    show_normal : bool, default=False
        Draw the weight vector w as an arrow normal to the decision boundary, from the
        boundary point closest to the origin. Needs ``coef_`` (and ``intercept_``).
    legend : bool, default=True
    alpha : float, default=0.2
        Opacity of the regions.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> from lincls.discriminant import LinearDiscriminant
    >>> X, y = logic_gate("and")
    >>> ax = plot_decision_regions(X, y, LinearDiscriminant(coef=[1, 1], intercept=-1.5).fit(X))
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"plot_decision_regions draws two features; X has shape {X.shape}.")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have one label per row of X; got {y.shape} for X {X.shape}.")
    if not hasattr(clf, "predict"):
        raise ValueError("clf must be a fitted classifier with a predict method.")
    ax = plt.gca() if ax is None else ax

    classes = list(getattr(clf, "classes_", np.unique(y)))
    classes += [c for c in np.unique(y) if c not in classes]
    index = {c: i for i, c in enumerate(classes)}
    colors = [CLASS_COLORS[i % len(CLASS_COLORS)] for i in range(len(classes))]

    if limits is None:
        (x0, y0), (x1, y1) = X.min(axis=0) - padding, X.max(axis=0) + padding
    else:
        (x0, x1), (y0, y1) = limits
    gx, gy = np.meshgrid(np.linspace(x0, x1, resolution), np.linspace(y0, y1, resolution))
    regions = clf.predict(np.c_[gx.ravel(), gy.ravel()])
    regions = np.array([index[c] for c in regions]).reshape(gx.shape)
    ax.contourf(gx, gy, regions, levels=np.arange(len(classes) + 1) - 0.5,
                cmap=ListedColormap(colors), alpha=alpha)

    for c, i in index.items():
        mask = y == c
        if mask.any():
            ax.scatter(X[mask, 0], X[mask, 1], color=colors[i], marker=_MARKERS[i % len(_MARKERS)],
                       edgecolor="white", linewidth=0.5, s=40, label=str(c), zorder=3)
    if mark_errors:
        wrong = clf.predict(X) != y
        if wrong.any():
            ax.scatter(X[wrong, 0], X[wrong, 1], facecolor="none", edgecolor="black", s=120,
                       linewidth=1.2, label="misclassified", zorder=4)
    if show_normal:
        _draw_normal(ax, clf, (x1 - x0, y1 - y0))
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    if legend:
        ax.legend(loc="best", fontsize="small", framealpha=0.8)
    return ax


def _draw_normal(ax, clf, span):
    """Arrow along w from the boundary point closest to the origin."""
    if not hasattr(clf, "coef_"):
        raise ValueError("show_normal=True needs a linear classifier with coef_.")
    w = np.asarray(clf.coef_, dtype=float).ravel()
    if w.size != 2:
        raise ValueError("show_normal=True needs a two-class classifier on two features.")
    b = float(np.ravel(getattr(clf, "intercept_", [0.0]))[0])
    norm = np.linalg.norm(w)
    if norm == 0:
        return
    foot = -b * w / norm**2  # the point of {x : w·x + b = 0} closest to the origin
    arrow = 0.25 * min(span) * w / norm
    ax.annotate("", xy=foot + arrow, xytext=foot,
                arrowprops=dict(arrowstyle="-|>", color="black", linewidth=1.5), zorder=5)
    ax.annotate(r"$\mathbf{w}$", xy=foot + 1.1 * arrow, ha="center", va="center", zorder=5)
