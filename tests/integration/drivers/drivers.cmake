# Prepared statements through the proxy with real client drivers (issue 5):
# libmariadb's mysql_stmt_* (gtest), Go database/sql + go-sql-driver/mysql,
# Java MariaDB Connector/J, PHP PDO, Perl DBD::mysql, Node.js mysql2, sysbench in ps mode.
# Included from tests/integration/CMakeLists.txt; uses its fixtures and
# sp_add_integration_test. docs/testing.md lists the tests.

set(SP_DRV_DIR ${CMAKE_CURRENT_SOURCE_DIR}/drivers)
set(SP_DRV_SCHEMA ${PROJECT_SOURCE_DIR}/scripts/schema)

# The physical tables of the shard map (msg_00.., tg_channel_message_s00..) on
# the test cluster: scripts/schema apply is idempotent.
add_test(NAME integration.prepared.schema
  COMMAND ${SP_IT_PYTHON} ${SP_DRV_SCHEMA} apply --config ${SP_IT_CONFIG})
set_tests_properties(integration.prepared.schema PROPERTIES
  FIXTURES_SETUP sp_drv_schema FIXTURES_REQUIRED sp_cluster RESOURCE_LOCK sp_cluster TIMEOUT 120)

# sp_drv_test(NAME name TIMEOUT s COMMAND ...): through the test proxy, with the schema.
function(sp_drv_test)
  cmake_parse_arguments(DRV "" "NAME;TIMEOUT" "COMMAND" ${ARGN})
  sp_add_integration_test(NAME prepared.${DRV_NAME} PROXY TIMEOUT ${DRV_TIMEOUT} COMMAND ${DRV_COMMAND})
  set_tests_properties(integration.prepared.${DRV_NAME} PROPERTIES
    FIXTURES_REQUIRED "sp_cluster;sp_proxy;sp_drv_schema")
  set_property(TEST integration.prepared.${DRV_NAME} APPEND PROPERTY ENVIRONMENT
    SP_PROXY_BINARY=${SP_PROXY_BINARY} SP_PROXY_PID_FILE=${SP_PROXY_RUN_DIR}/shardproxy.pid
    SP_PYTHON=${SP_IT_PYTHON})
endfunction()

add_executable(sp_prepared_capi_tests
  ${SP_DRV_DIR}/capi/prepared_test.cpp ${SP_DRV_DIR}/capi/prepared_scatter_test.cpp
  ${SP_DRV_DIR}/capi/prepared_catalog_test.cpp
  ${SP_DRV_DIR}/capi/reload_flood_test.cpp)
target_link_libraries(sp_prepared_capi_tests PRIVATE PkgConfig::LIBMARIADB GTest::gtest_main)
set_target_properties(sp_prepared_capi_tests PROPERTIES CXX_STANDARD 23)

sp_drv_test(NAME capi TIMEOUT 120
  COMMAND $<TARGET_FILE:sp_prepared_capi_tests> --gtest_filter=Prepared.*:PreparedScatter.*:PreparedCatalog.*)
sp_drv_test(NAME reload TIMEOUT 120
  COMMAND $<TARGET_FILE:sp_prepared_capi_tests> --gtest_filter=ShardMapReload.*)
sp_drv_test(NAME flood TIMEOUT 300
  COMMAND $<TARGET_FILE:sp_prepared_capi_tests> --gtest_filter=StatementFlood.*)
foreach(driver go java php perl node)
  sp_drv_test(NAME ${driver} TIMEOUT 180 COMMAND ${SP_DRV_DIR}/run_${driver}.sh)
endforeach()
sp_drv_test(NAME sysbench TIMEOUT 240 COMMAND ${SP_IT_PYTHON} ${SP_DRV_DIR}/sysbench_prepared.py)

# ---- transactions with real client drivers (issue 11) ----
# integration.tx.<driver>: read-your-write inside a transaction (prepared and
# text) on db0 and db1, rollback/commit, autocommit off by the driver's API and
# by SET spellings, multi-backend INSERT under autocommit off. Same fixtures as
# the prepared tests. SP_TX_DIRECT=1 (by hand) points them at MariaDB itself.
function(sp_tx_test)
  cmake_parse_arguments(TX "" "NAME;TIMEOUT" "COMMAND" ${ARGN})
  sp_add_integration_test(NAME tx.${TX_NAME} PROXY TIMEOUT ${TX_TIMEOUT} COMMAND ${TX_COMMAND})
  set_tests_properties(integration.tx.${TX_NAME} PROPERTIES
    FIXTURES_REQUIRED "sp_cluster;sp_proxy;sp_drv_schema")
endfunction()

add_executable(sp_tx_capi_tests ${SP_DRV_DIR}/capi/transactions_test.cpp)
target_link_libraries(sp_tx_capi_tests PRIVATE PkgConfig::LIBMARIADB GTest::gtest_main)
set_target_properties(sp_tx_capi_tests PROPERTIES CXX_STANDARD 23)
sp_tx_test(NAME capi TIMEOUT 120 COMMAND $<TARGET_FILE:sp_tx_capi_tests>)
sp_tx_test(NAME go TIMEOUT 180 COMMAND ${SP_DRV_DIR}/run_go.sh transactions)
sp_tx_test(NAME java TIMEOUT 180 COMMAND ${SP_DRV_DIR}/run_java.sh TransactionsIT)
foreach(driver php perl node)
  sp_tx_test(NAME ${driver} TIMEOUT 180 COMMAND ${SP_DRV_DIR}/run_${driver}.sh transactions)
endforeach()
# PyMySQL: the same flows, every SET autocommit spelling checked through the OK
# status flags, a proxy of its own with multi_shard_writes: best_effort
# (scatter_failure_proxy.py), and state isolation through the backend pool.
sp_add_integration_test(NAME py.transactions PROXY TIMEOUT 240
  COMMAND ${SP_IT_PYTHON} -m unittest -v pyit.test_transactions)
set_tests_properties(integration.py.transactions PROPERTIES
  FIXTURES_REQUIRED "sp_cluster;sp_proxy;sp_drv_schema")
set_property(TEST integration.py.transactions APPEND PROPERTY ENVIRONMENT
  SP_PROXY_BINARY=${SP_PROXY_BINARY} SP_SCATTER_IT_DIR=${CMAKE_CURRENT_BINARY_DIR}/scatter-run)
