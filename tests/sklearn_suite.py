"""scikit-learn's own tests of the estimators lincls re-implements, run on lincls.

The test layer ``make sklearn`` (pytest marker ``sklearn_suite``). Each file in FILES is
read from the installed scikit-learn and edited by a short list of exact text
substitutions: each must match exactly once, or the generation stops and names it. The
edited files, with a conftest that loads scikit-learn's fixtures and deselects the tests
in DESELECT, are written to a temporary directory and pytest runs there. A scikit-learn
upgrade thus re-runs its current tests on lincls; a test that does not apply is
deselected by name, with the reason, and a name that matches no test stops the run. (One
test's parametrization is narrowed by a substitution instead, where it says why.)

    python tests/sklearn_suite.py [pytest options]       # generate into a temporary
                                                          # directory and run pytest there
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each file ends with a footer that rebinds the names of the estimators under test to
# lincls's. A test looks its globals up when it runs, so every test body uses lincls's
# estimator, while the lists of estimators that parametrize tests, built when the module
# is imported, keep scikit-learn's own; those tests are deselected. Where a footer
# translates, it keeps scikit-learn's parameter names and defaults and drops only options
# that choose *how* the same solution is computed; every other option is passed on, so
# one that lincls lacks fails with a TypeError and its tests are deselected.

PERCEPTRON = "from lincls import MulticlassPerceptron, Perceptron"

LOGISTIC = '''
from lincls import LogisticRegression as _LogisticRegression


def LogisticRegression(*, C=1.0, solver="lbfgs", random_state=None, **params):
    # scikit-learn's default C=1.0 (lincls's is no penalty); its solvers compute the same
    # optimum as lincls's Newton method, except liblinear, which also penalizes the bias;
    # random_state seeds only sag, saga and liblinear
    if solver == "liblinear":
        params["solver"] = solver
    return _LogisticRegression(C=C, **params)
'''

SVM = '''
import types

import sklearn.svm
from lincls import KernelSVM


def _SVC(*, max_iter=-1, random_state=None, **params):
    # KernelSVM has SVC's parameters and defaults; max_iter=-1 is libsvm's "no limit"
    # (KernelSVM keeps its bound), random_state seeds only probability estimates
    return KernelSVM(**params) if max_iter == -1 else KernelSVM(max_iter=max_iter, **params)


svm = types.SimpleNamespace(**{**vars(sklearn.svm), "SVC": _SVC})
'''

PCA = '''
from lincls import PCA as _PCA


def PCA(n_components=None, *, svd_solver="auto", tol=0.0, iterated_power="auto",
        n_oversamples=10, power_iteration_normalizer="auto", random_state=None, **params):
    # the solver and its options choose how the same decomposition is computed (lincls:
    # the eigenvectors of the covariance matrix)
    return _PCA(n_components, **params)
'''

RIDGE = "from lincls import LeastSquares"

SGD = '''
from lincls import Adaline


def _Adaline(*, loss="squared_error", learning_rate="constant", eta0=0.01, tol=None,
             **params):
    # Widrow-Hoff LMS is SGD on the squared error with a constant step, one sample at a
    # time: Adaline with batch_size=1 (so a test that names no loss gets the squared
    # error, not scikit-learn's default hinge); tol=None, no stopping rule, runs max_iter
    # epochs
    if loss != "squared_error" or learning_rate != "constant":
        params.update(loss=loss, learning_rate=learning_rate)
    return Adaline(batch_size=1, eta=eta0, tol=0.0 if tol is None else tol, **params)
'''

# file written -> (its source in the installed scikit-learn, [(old, new), ...], footer)
FILES = {
    "test_perceptron.py": ("linear_model/tests/test_perceptron.py", [
        # iris has three classes: the linear machine of chapter "Multi-category
        # classification"; lincls's perceptron has no tol (it stops at a clean epoch)
        ("Perceptron(max_iter=100, tol=None, shuffle=False)",
         "MulticlassPerceptron(max_iter=100, shuffle=False)"),
        ("Perceptron(max_iter=2, shuffle=False, tol=None)",
         "Perceptron(max_iter=2, shuffle=False)"),
    ], PERCEPTRON),
    "test_logistic.py": ("linear_model/tests/test_logistic.py", [
        # the weighted fits: lincls's Newton method reaches the optimum of lbfgs,
        # newton-cg, newton-cholesky, sag and saga, not liblinear's, which also penalizes
        # the bias; the "cv" problem runs LogisticRegressionCV, scikit-learn's own
        ('''@pytest.mark.parametrize("problem", ("single", "cv"))
@pytest.mark.parametrize("solver", SOLVERS)
def test_logistic_regression_sample_weights(''',
         '''@pytest.mark.parametrize("problem", ("single",))
@pytest.mark.parametrize("solver", [s for s in SOLVERS if s != "liblinear"])
def test_logistic_regression_sample_weights('''),
        ('''@pytest.mark.parametrize("solver", SOLVERS)
def test_logistic_regression_solver_class_weights(''',
         '''@pytest.mark.parametrize("solver", [s for s in SOLVERS if s != "liblinear"])
def test_logistic_regression_solver_class_weights('''),
    ], LOGISTIC),
    "test_svm.py": ("svm/tests/test_svm.py", [
        # lincls's message names what is not finite
        ('''msg = "The dual coefficients or intercepts are not finite"''',
         '''msg = "non-finite kernel matrix or dual coefficients"'''),
    ], SVM),
    "test_pca.py": ("decomposition/tests/test_pca.py", [], PCA),
    "test_ridge.py": ("linear_model/tests/test_ridge.py", [
        # RidgeClassifierCV with alpha near 0 is least squares (LeastSquares has no penalty,
        # so alpha = 1e16 does not apply, and takes dense arrays only); it should recover
        # LinearRegression, which scikit-learn's own does not on tall or square X
        ('''@pytest.mark.parametrize("alpha", [1e-16, 1e16], ids=["zero_alpha", "inf_alpha"])
@pytest.mark.parametrize("gcv_mode", ["ignored"])''',
         '''@pytest.mark.parametrize("alpha", [1e-16], ids=["zero_alpha"])
@pytest.mark.parametrize("gcv_mode", ["ignored"])'''),
        ('''@pytest.mark.parametrize("X_container", [np.asarray] + CSR_CONTAINERS)
def test_regularization_limits_ridge_classifier_gcv(''',
         '''@pytest.mark.parametrize("X_container", [np.asarray])
def test_regularization_limits_ridge_classifier_gcv('''),
        ('''    if np.isclose(alpha, 0):
        # FIXME : test fails on square or tall X
        if n_features < n_samples:
            pytest.xfail(
                "RidgeClassifierCV does not recover LinearRegression "
                "on tall X in the small alpha limit"
            )
        elif n_features == n_samples:
            pytest.xfail(
                "RidgeClassifierCV does not recover LinearRegression "
                "on square X in the small alpha limit"
            )
''', ""),
        ('''    gcv_ridge = RidgeClassifierCV(alphas=alphas, fit_intercept=fit_intercept)
    if gcv_mode == "svd" and sparse_X:
        # TODO(1.11) should raises ValueError
        expected_msg = "The 'svd' mode is not supported for sparse X"
        with pytest.warns(FutureWarning, match=expected_msg):
            gcv_ridge.fit(X, y)
    else:
        gcv_ridge.fit(X, y)

    atol = 1e-5 if dtype == np.float32 else 1e-10
    assert_allclose(gcv_ridge.coef_, expected_coef, atol=atol)''',
         '''    gcv_ridge = LeastSquares(fit_intercept=fit_intercept).fit(X, y)

    atol = 1e-5 if dtype == np.float32 else 1e-10
    assert_allclose(gcv_ridge.coef_.ravel(), expected_coef, atol=atol)  # coef_: (1, n)'''),
    ], RIDGE),
    "test_sgd.py": ("linear_model/tests/test_sgd.py", [
        ("""def SGDClassifier(**kwargs):
    _update_kwargs(kwargs)
    return linear_model.SGDClassifier(**kwargs)""", """def SGDClassifier(**kwargs):
    _update_kwargs(kwargs)
    return _Adaline(**kwargs)"""),
    ], SGD),
}

# reason -> the tests it deselects: "file::test" (every parametrization) or "file::test[id]"
DESELECT = {
    "scikit-learn's own estimators and helpers only (LogisticRegressionCV, the "
    "regularization path, SVR, NuSVC, OneClassSVM, LinearSVC, Ridge, RidgeCV, "
    "SGDRegressor, SGDOneClassSVM, the estimators built when a module is imported): no "
    "lincls estimator runs": [
        "test_logistic.py::test_LogisticRegressionCV_elasticnet_attribute_shapes",
        "test_logistic.py::test_LogisticRegressionCV_no_refit",
        "test_logistic.py::test_elasticnet_l1_ratio_err_helpful",
        "test_logistic.py::test_get_default_scorer",
        "test_logistic.py::test_liblinear_multiclass_raises",
        "test_logistic.py::test_logistic_cv_mock_scorer",
        "test_logistic.py::test_logistic_cv_refit_false_non_elasticnet",
        "test_logistic.py::test_logistic_cv_sparse",
        "test_logistic.py::test_logistic_regression_path_coefs_multinomial",
        "test_logistic.py::test_logistic_regression_path_convergence_fail",
        "test_logistic.py::test_logistic_regression_path_init_coefs",
        "test_logistic.py::test_logistic_regressioncv_class_weights",
        "test_logistic.py::test_logisticregressioncv_warns_with_use_legacy_attributes",
        "test_logistic.py::test_lr_cv_scores_differ_when_sample_weight_is_requested",
        "test_logistic.py::test_lr_cv_scores_without_enabling_metadata_routing",
        "test_logistic.py::test_lr_scoring_warns",
        "test_logistic.py::test_passing_params_without_enabling_metadata_routing",
        "test_logistic.py::test_penalty_deprecated",
        "test_pca.py::test_assess_dimension_bad_rank",
        "test_pca.py::test_assess_dimension_rank_one",
        "test_pca.py::test_small_eigenvalues_mle",
        "test_ridge.py::test_X_CenterStackOp",
        "test_ridge.py::test_check_gcv_mode_choice",
        "test_ridge.py::test_class_weight_vs_sample_weight",
        "test_ridge.py::test_class_weights",
        "test_ridge.py::test_class_weights_cv",
        "test_ridge.py::test_compute_covariance",
        "test_ridge.py::test_compute_gram",
        "test_ridge.py::test_dense_sparse",
        "test_ridge.py::test_dtype_match",
        "test_ridge.py::test_dtype_match_cholesky",
        "test_ridge.py::test_lbfgs_solver_consistency",
        "test_ridge.py::test_lbfgs_solver_error",
        "test_ridge.py::test_metadata_routing_with_default_scoring",
        "test_ridge.py::test_n_iter",
        "test_ridge.py::test_positive_ridge_loss",
        "test_ridge.py::test_primal_dual_relationship",
        "test_ridge.py::test_raises_value_error_if_sample_weights_greater_than_1d",
        "test_ridge.py::test_regularization_limits_ridge",
        "test_ridge.py::test_regularization_limits_ridge_gcv",
        "test_ridge.py::test_ridge_best_score",
        "test_ridge.py::test_ridge_classifier_cv_store_cv_results",
        "test_ridge.py::test_ridge_classifier_with_scoring",
        "test_ridge.py::test_ridge_cv_custom_multioutput_scorer",
        "test_ridge.py::test_ridge_cv_individual_penalties",
        "test_ridge.py::test_ridge_cv_multioutput_sample_weight",
        "test_ridge.py::test_ridge_cv_results_predictions",
        "test_ridge.py::test_ridge_fit_intercept_sparse",
        "test_ridge.py::test_ridge_fit_intercept_sparse_error",
        "test_ridge.py::test_ridge_fit_intercept_sparse_sag",
        "test_ridge.py::test_ridge_gcv_cv_results_not_stored",
        "test_ridge.py::test_ridge_gcv_integer_arrays",
        "test_ridge.py::test_ridge_gcv_sample_weights",
        "test_ridge.py::test_ridge_gcv_vs_ridge_loo_cv",
        "test_ridge.py::test_ridge_ground_truth_positive_test",
        "test_ridge.py::test_ridge_individual_penalties",
        "test_ridge.py::test_ridge_intercept",
        "test_ridge.py::test_ridge_loo_cv_asym_scoring",
        "test_ridge.py::test_ridge_positive_error_test",
        "test_ridge.py::test_ridge_positive_regression_test",
        "test_ridge.py::test_ridge_regression",
        "test_ridge.py::test_ridge_regression_check_arguments_validity",
        "test_ridge.py::test_ridge_regression_convergence_fail",
        "test_ridge.py::test_ridge_regression_custom_scoring",
        "test_ridge.py::test_ridge_regression_dtype_stability",
        "test_ridge.py::test_ridge_regression_hstacked_X",
        "test_ridge.py::test_ridge_regression_sample_weights",
        "test_ridge.py::test_ridge_regression_unpenalized",
        "test_ridge.py::test_ridge_regression_unpenalized_hstacked_X",
        "test_ridge.py::test_ridge_regression_unpenalized_vstacked_X",
        "test_ridge.py::test_ridge_regression_vstacked_X",
        "test_ridge.py::test_ridge_sag_with_X_fortran",
        "test_ridge.py::test_ridge_sample_weight_consistency",
        "test_ridge.py::test_ridge_shapes_type",
        "test_ridge.py::test_ridge_vs_lstsq",
        "test_ridge.py::test_ridgeclassifier_multilabel",
        "test_ridge.py::test_ridgecv_alphas_conversion",
        "test_ridge.py::test_ridgecv_alphas_scalar",
        "test_ridge.py::test_ridgecv_alphas_validation",
        "test_ridge.py::test_ridgecv_alphas_zero",
        "test_ridge.py::test_ridgecv_int_alphas",
        "test_ridge.py::test_ridgecv_sample_weight",
        "test_ridge.py::test_ridgecv_store_cv_results",
        "test_ridge.py::test_set_score_request_with_default_scoring",
        "test_ridge.py::test_solver_consistency",
        "test_ridge.py::test_sparse_cg_max_iter",
        "test_ridge.py::test_sparse_design_with_sample_weights",
        "test_sgd.py::test_average_sparse",
        "test_sgd.py::test_average_sparse_oneclass",
        "test_sgd.py::test_clone_oneclass",
        "test_sgd.py::test_elasticnet_convergence",
        "test_sgd.py::test_gradient_squared_hinge",
        "test_sgd.py::test_late_onset_averaging_reached_oneclass",
        "test_sgd.py::test_loss_epsilon_insensitive",
        "test_sgd.py::test_loss_function_epsilon",
        "test_sgd.py::test_loss_hinge",
        "test_sgd.py::test_loss_modified_huber",
        "test_sgd.py::test_loss_squared_epsilon_insensitive",
        "test_sgd.py::test_ocsvm_vs_sgdocsvm",
        "test_sgd.py::test_partial_fit",
        "test_sgd.py::test_partial_fit_equal_fit",
        "test_sgd.py::test_partial_fit_equal_fit_oneclass",
        "test_sgd.py::test_partial_fit_oneclass",
        "test_sgd.py::test_sgd_averaged_computed_correctly",
        "test_sgd.py::test_sgd_averaged_computed_correctly_oneclass",
        "test_sgd.py::test_sgd_averaged_partial_fit",
        "test_sgd.py::test_sgd_averaged_partial_fit_oneclass",
        "test_sgd.py::test_sgd_epsilon_insensitive",
        "test_sgd.py::test_sgd_error_on_zero_validation_weight",
        "test_sgd.py::test_sgd_huber_fit",
        "test_sgd.py::test_sgd_least_squares_fit",
        "test_sgd.py::test_sgd_numerical_consistency[SGDOneClassSVM]",
        "test_sgd.py::test_sgd_numerical_consistency[SGDRegressor]",
        "test_sgd.py::test_sgd_numerical_consistency[SparseSGDClassifier]",
        "test_sgd.py::test_sgd_numerical_consistency[SparseSGDOneClassSVM]",
        "test_sgd.py::test_sgd_numerical_consistency[SparseSGDRegressor]",
        "test_sgd.py::test_sgd_one_class_svm_estimator_type",
        "test_sgd.py::test_sgd_one_class_svm_formulation_with_scipy_minimize",
        "test_sgd.py::test_sgd_oneclass_convergence",
        "test_sgd.py::test_sgd_oneclass_vs_linear_oneclass",
        "test_sgd.py::test_sgd_oneclass_vs_linear_oneclass_offsets_match",
        "test_sgd.py::test_sgd_random_state",
        "test_sgd.py::test_sgd_reg",
        "test_sgd.py::test_validation_mask_correctly_subsets",
        "test_sgd.py::test_warm_start_oneclass",
        "test_svm.py::test_crammer_singer_binary",
        "test_svm.py::test_custom_kernel_not_array_input",
        "test_svm.py::test_decision_function_shape",
        "test_svm.py::test_dense_liblinear_intercept_handling",
        "test_svm.py::test_dual_auto",
        "test_svm.py::test_dual_auto_edge_cases",
        "test_svm.py::test_liblinear_set_coef",
        "test_svm.py::test_linear_svm_convergence_warnings",
        "test_svm.py::test_linearsvc",
        "test_svm.py::test_linearsvc_crammer_singer",
        "test_svm.py::test_linearsvc_fit_sampleweight",
        "test_svm.py::test_linearsvc_iris",
        "test_svm.py::test_linearsvc_parameters",
        "test_svm.py::test_linearsvc_verbose",
        "test_svm.py::test_linearsvm_liblinear_sample_weight",
        "test_svm.py::test_linearsvr",
        "test_svm.py::test_linearsvr_fit_sampleweight",
        "test_svm.py::test_lsvc_intercept_scaling_zero",
        "test_svm.py::test_n_iter_libsvm",
        "test_svm.py::test_n_support",
        "test_svm.py::test_negative_sample_weights_mask_all_samples",
        "test_svm.py::test_negative_weight_equal_coeffs",
        "test_svm.py::test_negative_weights_svc_leave_just_one_label",
        "test_svm.py::test_negative_weights_svc_leave_two_labels",
        "test_svm.py::test_oneclass",
        "test_svm.py::test_oneclass_decision_function",
        "test_svm.py::test_oneclass_score_samples",
        "test_svm.py::test_probability_raises_futurewarning",
        "test_svm.py::test_sparse_fit_support_vectors_empty",
        "test_svm.py::test_svc_invalid_break_ties_param",
        "test_svm.py::test_svc_nusvc_probA_probB_deprecated",
        "test_svm.py::test_svc_ovr_tie_breaking",
        "test_svm.py::test_svm_classifier_sided_sample_weight",
        "test_svm.py::test_svm_regressor_sided_sample_weight",
        "test_svm.py::test_svm_with_infinite_C",
        "test_svm.py::test_svr",
        "test_svm.py::test_svr_coef_sign",
        "test_svm.py::test_svr_errors",
        "test_svm.py::test_svr_predict",
    ],
    "more than two classes: lincls's classifiers are binary, as in the book (the linear "
    'machine of chapter "Multi-category classification" is MulticlassPerceptron)': [
        "test_logistic.py::test_LogisticRegressionCV_on_folds",
        "test_logistic.py::test_logistic_regression_class_weights",
        "test_logistic.py::test_logistic_cv_folds_with_classes_missing[3-False]",
        "test_logistic.py::test_logistic_cv_folds_with_classes_missing[3-True]",
        "test_logistic.py::test_logistic_glmnet",
        "test_logistic.py::test_logistic_regression_solvers_multiclass",
        "test_logistic.py::test_logistic_regression_solvers_multiclass_unpenalized",
        "test_logistic.py::test_logreg_predict_proba_multinomial",
        "test_logistic.py::test_multinomial_identifiability_on_iris",
        "test_logistic.py::test_multinomial_logistic_regression_string_inputs",
        "test_logistic.py::test_predict_3_classes",
        "test_logistic.py::test_sample_weight_not_modified",
        "test_logistic.py::test_sparsify",
        "test_logistic.py::test_warm_start_newton_solver",
        "test_sgd.py::test_fit_then_partial_fit",
        "test_svm.py::test_auto_weight",
        "test_svm.py::test_immutable_coef_property",
        "test_svm.py::test_libsvm_iris",
    ],
    "the array API (scikit-learn's dispatch to other array libraries): lincls computes "
    "with NumPy": [
        "test_logistic.py::test_logistic_regression_array_api_compliance",
        "test_logistic.py::test_logistic_regression_array_api_warm_start",
        "test_pca.py::test_array_api_error_and_warnings_on_unsupported_params",
        "test_pca.py::test_pca_array_api_compliance",
        "test_pca.py::test_pca_mle_array_api_compliance",
        "test_ridge.py::test_array_api_error_and_warnings_for_solver_parameter",
        "test_ridge.py::test_array_api_numpy_namespace_no_warning",
        "test_ridge.py::test_ridge_array_api_compliance",
        "test_ridge.py::test_ridge_classifier_multilabel_array_api",
        "test_ridge.py::test_ridge_per_target_alpha_array_api",
    ],
    "sparse input: lincls takes dense arrays": [
        "test_logistic.py::test_large_sparse_matrix",
        "test_logistic.py::test_predict_2_classes",
        "test_pca.py::test_pca_sparse",
        "test_pca.py::test_pca_sparse_fit_transform",
        "test_pca.py::test_sparse_pca_auto_arpack_singular_values_consistency",
        "test_pca.py::test_sparse_pca_solver_error",
        "test_perceptron.py::test_perceptron_accuracy[csr_array]",
        "test_perceptron.py::test_perceptron_accuracy[csr_matrix]",
        "test_svm.py::test_bad_input",
    ],
    "options lincls's estimators do not have: l1 and elastic-net penalties, liblinear (which "
    "also penalizes the bias), warm_start, intercept_scaling, dual, n_jobs, callbacks, "
    "probability, "
    "decision_function_shape, precomputed or callable kernels, whitening, SGD's losses, "
    "penalties, learning rates, averaging, early stopping, partial_fit and coef_init": [
        "test_logistic.py::test_LogisticRegressionCV_GridSearchCV_elastic_net",
        "test_logistic.py::test_LogisticRegression_elastic_net_objective",
        "test_logistic.py::test_check_solver_option",
        "test_logistic.py::test_consistency_path",
        "test_logistic.py::test_elastic_net_coeffs",
        "test_logistic.py::test_elastic_net_l1_l2_equivalence",
        "test_logistic.py::test_elastic_net_versus_sgd",
        "test_logistic.py::test_elastic_net_vs_l1_l2",
        "test_logistic.py::test_l1_ratio_None_deprecated",
        "test_logistic.py::test_l1_ratio_non_elasticnet",
        "test_logistic.py::test_liblinear_decision_function_zero",
        "test_logistic.py::test_liblinear_dual_random_state",
        "test_logistic.py::test_liblinear_not_stuck",
        "test_logistic.py::test_liblinear_with_large_values",
        "test_logistic.py::test_logistic_cv",
        "test_logistic.py::test_logistic_cv_multinomial_score",
        "test_logistic.py::test_logistic_regression_callback_fitted_estimator",
        "test_logistic.py::test_logistic_regression_callback_support",
        "test_logistic.py::test_logistic_regression_callback_support_warning",
        "test_logistic.py::test_logistic_regression_cv_refit",
        "test_logistic.py::test_logistic_regression_solvers",
        "test_logistic.py::test_logisticregression_liblinear_sample_weight",
        "test_logistic.py::test_logisticregression_warns_with_n_jobs",
        "test_logistic.py::test_logreg_l1",
        "test_logistic.py::test_lr_penalty_l1ratio_incompatible",
        "test_logistic.py::test_penalty_none",
        "test_logistic.py::test_saga_vs_liblinear",
        "test_logistic.py::test_sample_and_class_weight_equivalence_liblinear",
        "test_logistic.py::test_scores_attribute_layout_elasticnet",
        "test_logistic.py::test_warm_start",
        "test_logistic.py::test_warm_start_converge_LR",
        "test_pca.py::test_pca_inverse",
        "test_pca.py::test_pca_solver_equivalence",
        "test_pca.py::test_whitening",
        "test_perceptron.py::test_perceptron_l1_ratio",
        "test_sgd.py::test_SGDClassifier_fit_for_all_backends",
        "test_sgd.py::test_adaptive_longer_than_constant",
        "test_sgd.py::test_average_binary_computed_correctly",
        "test_sgd.py::test_clone",
        "test_sgd.py::test_early_stopping",
        "test_sgd.py::test_input_format",
        "test_sgd.py::test_l1_ratio",
        "test_sgd.py::test_large_regularization",
        "test_sgd.py::test_late_onset_averaging_not_reached",
        "test_sgd.py::test_late_onset_averaging_reached",
        "test_sgd.py::test_learning_rate_PA_raises",
        "test_sgd.py::test_multi_core_gridsearch_and_early_stopping",
        "test_sgd.py::test_multi_thread_multi_class_and_early_stopping",
        "test_sgd.py::test_multiple_fit",
        "test_sgd.py::test_n_iter_no_change",
        "test_sgd.py::test_not_enough_sample_for_early_stopping",
        "test_sgd.py::test_numerical_stability_large_gradient",
        "test_sgd.py::test_partial_fit_binary",
        "test_sgd.py::test_partial_fit_equal_fit_classif",
        "test_sgd.py::test_partial_fit_exception",
        "test_sgd.py::test_partial_fit_multiclass",
        "test_sgd.py::test_partial_fit_multiclass_average",
        "test_sgd.py::test_partial_fit_weight_class_balanced",
        "test_sgd.py::test_plain_has_no_average_attr",
        "test_sgd.py::test_power_t_limits",
        "test_sgd.py::test_provide_coef",
        "test_sgd.py::test_regression_losses",
        "test_sgd.py::test_set_coef_multiclass",
        "test_sgd.py::test_set_intercept_offset",
        "test_sgd.py::test_set_intercept_offset_binary",
        "test_sgd.py::test_set_intercept_to_intercept",
        "test_sgd.py::test_sgd_at_least_two_labels",
        "test_sgd.py::test_sgd_clf",
        "test_sgd.py::test_sgd_early_stopping_with_partial_fit",
        "test_sgd.py::test_sgd_failing_penalty_validation",
        "test_sgd.py::test_sgd_l1",
        "test_sgd.py::test_sgd_l1_ratio_not_used",
        "test_sgd.py::test_sgd_multiclass",
        "test_sgd.py::test_sgd_multiclass_average",
        "test_sgd.py::test_sgd_multiclass_njobs",
        "test_sgd.py::test_sgd_multiclass_with_init_coef",
        "test_sgd.py::test_sgd_predict_proba_method_access",
        "test_sgd.py::test_sgd_proba",
        "test_sgd.py::test_sgd_verbose",
        "test_sgd.py::test_underflow_or_overflow",
        "test_sgd.py::test_validation_set_not_used_for_training",
        "test_sgd.py::test_warm_start",
        "test_sgd.py::test_warm_start_multiclass",
        "test_svm.py::test_decision_function",
        "test_svm.py::test_decision_function_shape_two_class",
        "test_svm.py::test_hasattr_predict_proba",
        "test_svm.py::test_libsvm_convergence_warnings",
        "test_svm.py::test_ovr_decision_function",
        "test_svm.py::test_precomputed",
        "test_svm.py::test_probability",
        "test_svm.py::test_sparse_precomputed",
        "test_svm.py::test_svc_clone_with_callable_kernel",
    ],
    "the weight tests of SGDClassifier set its L2 penalty alpha, which Adaline (LMS) does "
    "not have; Adaline takes sample_weight but no class_weight, as SGDRegressor, the LMS "
    "of scikit-learn, takes none (tests/test_sample_weight.py tests Adaline's weights)": [
        "test_sgd.py::test_balanced_weight",
        "test_sgd.py::test_class_weights",
        "test_sgd.py::test_equal_class_weight",
        "test_sgd.py::test_sample_weights",
        "test_sgd.py::test_weights_multiplied",
        "test_sgd.py::test_wrong_class_weight_label",
        "test_sgd.py::test_wrong_sample_weights",
    ],
    "float32 results: lincls computes in float64 and returns float64": [
        "test_logistic.py::test_dtype_match",
        "test_pca.py::test_pca_dtype_preservation",
        "test_sgd.py::test_sgd_dtype_match",
    ],
    "PCA's probabilistic model (score, get_covariance, noise_variance_), singular_values_ "
    "and n_components='mle': lincls's PCA is the chapter's eigen-decomposition of the "
    "covariance matrix": [
        "test_pca.py::test_fit_mle_too_few_samples",
        "test_pca.py::test_mle_redundant_data",
        "test_pca.py::test_mle_simple_case",
        "test_pca.py::test_n_components_mle",
        "test_pca.py::test_n_components_mle_error",
        "test_pca.py::test_pca",
        "test_pca.py::test_pca_dim",
        "test_pca.py::test_pca_sanity_noise_variance",
        "test_pca.py::test_pca_score",
        "test_pca.py::test_pca_score3",
        "test_pca.py::test_pca_score_consistency_solvers",
        "test_pca.py::test_pca_singular_values",
        "test_pca.py::test_pca_singular_values_consistency",
        "test_pca.py::test_pca_zero_noise_variance_edge_cases",
    ],
    "the limits of scikit-learn's arpack solver (it cannot compute all components), and "
    "its messages": [
        "test_pca.py::test_n_components_none[data0-arpack-3]",
        "test_pca.py::test_n_components_none[data1-arpack-3]",
        "test_pca.py::test_pca_validation",
    ],
    "scikit-learn's internals and wording: solver names in warnings, n_iter_ as an array "
    "per class, max_iter=0, libsvm's private attributes, the class name SVC in a message, "
    "_fit_svd_solver": [
        "test_logistic.py::test_max_iter",
        "test_logistic.py::test_n_iter",
        "test_logistic.py::test_newton_cholesky_fallback_to_lbfgs",
        "test_logistic.py::test_zero_max_iter",
        "test_pca.py::test_pca_svd_solver_auto",
        "test_svm.py::test_svc_raises_error_internal_representation",
        "test_svm.py::test_tweak_params",
        "test_svm.py::test_unfitted",
    ],
    "Adaline stops when the gradient norm is at most tol, SGDClassifier when the loss "
    "stops improving by tol: the same name for another rule": [
        "test_sgd.py::test_tol_parameter",
    ],
    "with more features than samples and an intercept, the minimizers of the squared "
    "error form a subspace: LeastSquares's minimum-norm solution counts the bias in the "
    "norm (the augmented vector of Duda, Hart and Stork), LinearRegression's does not": [
        "test_ridge.py::test_regularization_limits_ridge_classifier_gcv"
        "[asarray-float32-wide-True-ignored-zero_alpha]",
        "test_ridge.py::test_regularization_limits_ridge_classifier_gcv"
        "[asarray-float64-wide-True-ignored-zero_alpha]",
    ],
}

CONFTEST = '''\
"""Generated by tests/sklearn_suite.py: scikit-learn's fixtures, and the deselections."""
import pytest

pytest_plugins = ["sklearn.conftest"]

DESELECT = {deselect!r}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    files = {{item.nodeid.split("::")[0] for item in items}}
    names = {{name for names in DESELECT.values() for name in names
              if name.split("::")[0] in files}}
    used = set()
    keep, drop = [], []
    for item in items:
        bare = item.nodeid.split("[")[0]
        match = {{item.nodeid, bare}} & names
        used |= match
        (drop if match else keep).append(item)
    unused = sorted(names - used)
    if unused:
        raise pytest.UsageError("DESELECT names tests that do not exist: " + ", ".join(unused))
    items[:] = keep
    config.hook.pytest_deselected(items=drop)
'''


def generate(out, sklearn_dir=None):
    """Write the edited test files and their conftest into the directory ``out``."""
    if sklearn_dir is None:
        import sklearn

        sklearn_dir = Path(sklearn.__file__).parent
    out = Path(out)
    for name, (source, substitutions, footer) in FILES.items():
        text = (Path(sklearn_dir) / source).read_text()
        for old, new in substitutions:
            count = text.count(old)
            if count != 1:
                raise RuntimeError(f"{source}: the substitution of {old!r} matches {count} "
                                   "times, not once; update FILES in tests/sklearn_suite.py")
            text = text.replace(old, new)
        footer = f"\n\n# -- generated: the estimators under test are lincls's --\n{footer}\n"
        (out / name).write_text(text + footer)
    (out / "conftest.py").write_text(CONFTEST.format(deselect=DESELECT))
    (out / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")


def run(out, args=(), **kwargs):
    """Run pytest on the generated files in ``out``, with this checkout's lincls first."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=out, env=env, **kwargs)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp)
        sys.exit(run(tmp, sys.argv[1:]).returncode)
