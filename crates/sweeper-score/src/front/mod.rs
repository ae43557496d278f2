//! Pareto-front kernels over row-major `n × d` matrices of `f64`.
