"""The point fit: the Bradley–Terry likelihood, its batched solvers, the MLE's existence, the small-sample rule and analytic covariances."""
