# Decompresses the zstd fixtures for test builds whose host has no zstd
# tool at run time (Windows): every DATA_DIR/*.zst and
# SHARED_DIR/images/syzkaller/*.zst (when there) becomes
# OUT/<folder of the .zst>/<name without .zst>, as sparse files, with the
# build host's zstd (ZSTD); test_support.cpp's unzstd() and read_zst() read
# them. Rewrites only what is missing or older than its .zst.
#   cmake -DZSTD=... -DDATA_DIR=... -DSHARED_DIR=... -DOUT=... -P unzstd_fixtures.cmake
file(GLOB _zst ${DATA_DIR}/*.zst)
if(SHARED_DIR AND IS_DIRECTORY ${SHARED_DIR}/images/syzkaller)
  file(GLOB _shared ${SHARED_DIR}/images/syzkaller/*.zst)
  list(APPEND _zst ${_shared})
endif()
foreach(src IN LISTS _zst)
  get_filename_component(_name ${src} NAME)
  string(REGEX REPLACE "\\.zst$" "" _stem ${_name})
  get_filename_component(_dir ${src} DIRECTORY)
  get_filename_component(_folder ${_dir} NAME)
  set(_out ${OUT}/${_folder}/${_stem})
  if(NOT EXISTS ${_out} OR ${src} IS_NEWER_THAN ${_out})
    file(MAKE_DIRECTORY ${OUT}/${_folder})
    execute_process(COMMAND ${ZSTD} -q -d -f --sparse ${src} -o ${_out} RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      file(REMOVE ${_out})
      message(FATAL_ERROR "${ZSTD} could not decompress ${src}")
    endif()
  endif()
endforeach()
file(TOUCH ${OUT}/stamp)
