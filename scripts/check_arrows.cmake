# Build-time check of one library's arrows (CMakeLists.txt, sp_check_arrows):
# every file of FOLDER may include headers of FOLDER itself and of ALLOWED
# (the folders of the libraries its target links directly), and nothing else
# of the product. Fails the build naming the file, the header and the rule.
#   cmake -DFOLDER=proxy/move -DALLOWED="proxy/maps;proxy/core" -DPRODUCT="protocol;parser;..."
#         -DSOURCE_DIR=<repo> -DSTAMP=<file> -P scripts/check_arrows.cmake
cmake_minimum_required(VERSION 3.25)
file(GLOB files ${SOURCE_DIR}/${FOLDER}/*.cpp ${SOURCE_DIR}/${FOLDER}/*.hpp)
set(problems "")
foreach(f IN LISTS files)
  file(STRINGS ${f} lines REGEX "^#include \"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${line}")
    get_filename_component(inc_dir "${inc}" DIRECTORY)
    string(REGEX MATCH "^[a-z_]+" top "${inc_dir}")
    if(top IN_LIST PRODUCT AND NOT inc_dir STREQUAL FOLDER AND NOT inc_dir IN_LIST ALLOWED)
      file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
      string(APPEND problems "  ${rel} includes ${inc}: ${FOLDER} may use only ${ALLOWED}\n")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "arrows: ${FOLDER}/CMakeLists.txt does not link what these files include "
                      "(docs/architecture.md says which arrows are allowed):\n${problems}")
endif()
file(WRITE ${STAMP} "ok\n")
