# Tests of runtime/'s model: spec, partition, text and sampler, partition-independent init,
# activation accounting, finite differences, and a pipeline run by hand (p = 2..4, v = 1..2,
# fused and split B/W) bitwise against the single-process reference; then that it learns.
pps_unit_test(test_model pps_runtime)
pps_unit_test(test_model_learn pps_runtime)
