# Shard-map lifecycle integration tests (issue 6), included from
# tests/integration/CMakeLists.txt. They start their OWN shardproxy (ports
# below) with a scratch config, map file and SQLite cache under
# <build>/tests/integration/admin-run/, because they rewrite the map, delete it,
# corrupt the cache and restart the proxy. They need the cluster fixture only.
# Ports: two free ones picked by the test (set SP_ADMIN_IT_PORT/_ADMIN_PORT in
# the environment to force them).

set(SP_ADMIN_IT_ENV
  SP_ADMIN_IT_DIR=${CMAKE_CURRENT_BINARY_DIR}/admin-run
  SP_PROXY_BINARY=${SP_PROXY_BINARY}
  SP_DB0_PORT=${SP_IT_DB0_PORT}
  SP_DB1_PORT=${SP_IT_DB1_PORT}
  PYTHONDONTWRITEBYTECODE=1)

# lifecycle (issue 18): partitions and archives on scratch tables of the cluster's DDL.
foreach(name admin reload_load lifecycle)
  add_test(NAME integration.${name}
    COMMAND ${SP_IT_PYTHON} -m unittest -v ${name}_test
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(integration.${name} PROPERTIES
    FIXTURES_REQUIRED sp_cluster RESOURCE_LOCK sp_cluster
    ENVIRONMENT "${SP_ADMIN_IT_ENV}" TIMEOUT 240)
endforeach()

# Online moves (issue 17): its own proxy (scratch map, config and SQLite file
# under admin-run/), scratch tables of the cluster's DDL, an unsharded mirror
# database on db1; the cluster writes a row-format binlog (scripts/cluster).
add_test(NAME integration.move
  COMMAND ${SP_IT_PYTHON} -m unittest -v move_test
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(integration.move PROPERTIES
  FIXTURES_REQUIRED sp_cluster RESOURCE_LOCK sp_cluster
  ENVIRONMENT "${SP_ADMIN_IT_ENV}" TIMEOUT 600)

# The hot-key policy (issue 32, overload.hot_key_auto_move): a hot channel
# moved to a shard of its own by the proxy itself, once (about 30 s).
add_test(NAME integration.hot_key_auto_move
  COMMAND ${SP_IT_PYTHON} -m unittest -v hot_key_auto_move_test
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(integration.hot_key_auto_move PROPERTIES
  FIXTURES_REQUIRED sp_cluster RESOURCE_LOCK sp_cluster
  ENVIRONMENT "${SP_ADMIN_IT_ENV}" TIMEOUT 120)

# A failed move's partial copy is deleted once its target is back (issue 29,
# part 7): db1's mariadbd is killed during a move's copy and restarted.
add_test(NAME integration.move_target_back
  COMMAND ${SP_IT_PYTHON} -m unittest -v move_target_back_test
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(integration.move_target_back PROPERTIES
  FIXTURES_REQUIRED sp_cluster RESOURCE_LOCK sp_cluster
  ENVIRONMENT "${SP_ADMIN_IT_ENV}" TIMEOUT 300)

# A backend that stops answering (SIGSTOP of db0's mariadbd) is detected by
# its health probes (issue 29, part 7): its own proxy with small ha timeouts.
add_test(NAME integration.hung_backend
  COMMAND ${SP_IT_PYTHON} -m unittest -v hung_backend_test
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(integration.hung_backend PROPERTIES
  FIXTURES_REQUIRED sp_cluster RESOURCE_LOCK sp_cluster
  ENVIRONMENT "${SP_ADMIN_IT_ENV}" TIMEOUT 120)
