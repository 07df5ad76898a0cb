# Fleet integration test (issue 19), included from tests/integration/CMakeLists.txt:
# a real 3-member etcd cluster and three shardproxy processes of their own
# (scripts/fleet's classes), over the shared MariaDB cluster. etcd's data
# and every process are removed at the end of the test, also on failure.
set(SP_IT_ETCD_PORTS "23791,23792,23793" CACHE STRING "Client ports of the fleet test's etcd members")
set(SP_IT_ETCD_PEER_PORTS "23801,23802,23803" CACHE STRING "Peer ports of the fleet test's etcd members")
set(SP_IT_FLEET_PROXY_PORTS "" CACHE STRING "Listen ports of the fleet test's three proxies (admin = +1); empty = free ports")

add_test(NAME integration.fleet
  COMMAND ${SP_IT_PYTHON} -m unittest -v fleet_test
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(integration.fleet PROPERTIES
  FIXTURES_REQUIRED sp_cluster RESOURCE_LOCK sp_cluster TIMEOUT 300
  ENVIRONMENT "SP_FLEET_IT_DIR=${CMAKE_CURRENT_BINARY_DIR}/fleet-run;SP_PROXY_BINARY=${SP_PROXY_BINARY};SP_DB0_PORT=${SP_IT_DB0_PORT};SP_DB1_PORT=${SP_IT_DB1_PORT};SP_FLEET_ETCD_PORTS=${SP_IT_ETCD_PORTS};SP_FLEET_PEER_PORTS=${SP_IT_ETCD_PEER_PORTS};SP_FLEET_PROXY_PORTS=${SP_IT_FLEET_PROXY_PORTS};PYTHONDONTWRITEBYTECODE=1")

# A bucket move's fenced cut-over across the same fleet (issue 19, part 3):
# writers on all three proxies, an unsharded mirror, a trigger on the source.
add_test(NAME integration.fleet_move
  COMMAND ${SP_IT_PYTHON} -m unittest -v fleet_move_test
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(integration.fleet_move PROPERTIES
  FIXTURES_REQUIRED sp_cluster RESOURCE_LOCK sp_cluster TIMEOUT 300
  ENVIRONMENT "SP_FLEET_IT_DIR=${CMAKE_CURRENT_BINARY_DIR}/fleet-move-run;SP_PROXY_BINARY=${SP_PROXY_BINARY};SP_DB0_PORT=${SP_IT_DB0_PORT};SP_DB1_PORT=${SP_IT_DB1_PORT};SP_FLEET_ETCD_PORTS=${SP_IT_ETCD_PORTS};SP_FLEET_PEER_PORTS=${SP_IT_ETCD_PEER_PORTS};SP_FLEET_PROXY_PORTS=${SP_IT_FLEET_PROXY_PORTS};PYTHONDONTWRITEBYTECODE=1")

# Cross-backend transactions in the same kind of fleet (issue 35): the proxy
# that decided is killed (fail points), the other finishes its branches once
# its lease expired. Its own etcd prefix and run directory.
add_test(NAME integration.xa_fleet
  COMMAND ${SP_IT_PYTHON} -m unittest -v xa_fleet_test
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(integration.xa_fleet PROPERTIES
  FIXTURES_REQUIRED sp_cluster RESOURCE_LOCK sp_cluster TIMEOUT 180
  ENVIRONMENT "SP_FLEET_IT_DIR=${CMAKE_CURRENT_BINARY_DIR}/xa-fleet-run;SP_SCATTER_IT_DIR=${CMAKE_CURRENT_BINARY_DIR}/xa-fleet-run/scatter;SP_PROXY_BINARY=${SP_PROXY_BINARY};SP_DB0_PORT=${SP_IT_DB0_PORT};SP_DB1_PORT=${SP_IT_DB1_PORT};SP_FLEET_ETCD_PORTS=${SP_IT_ETCD_PORTS};SP_FLEET_PEER_PORTS=${SP_IT_ETCD_PEER_PORTS};SP_FLEET_PROXY_PORTS=${SP_IT_FLEET_PROXY_PORTS};PYTHONDONTWRITEBYTECODE=1")
