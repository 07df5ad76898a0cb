# Differential test of scatter-gather (issue 4): seeded random SELECTs through
# the test proxy compared with one unsharded MariaDB (scripts/cluster up
# --ports ${SP_DIFF_REF_PORT}, database im_ref) loaded with the same rows.
# Included from tests/integration/CMakeLists.txt; docs/testing.md describes it.
set(SP_DIFF_REF_PORT 3309 CACHE STRING "Port of the unsharded reference server of the differential test")

sp_add_integration_test(NAME differential PROXY TIMEOUT 300
  COMMAND ${SP_IT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/differential/diff_test.py)
set_property(TEST integration.differential APPEND PROPERTY ENVIRONMENT
  SP_DIFF_CONFIG=${SP_IT_CONFIG} SP_DIFF_REF_PORT=${SP_DIFF_REF_PORT})
