# `fuzz --shard auto` takes its shard from the environment: four Kubernetes Indexed Job pods
# (JOB_COMPLETION_INDEX=0..3, ONEJOB_SHARDS=4) and four GitLab parallel jobs (CI_NODE_INDEX=1..4,
# CI_NODE_TOTAL=4), each set merged, give the unsharded campaign's totals and mark counts. With no
# shard in the environment, or a broken one, it is bad input (exit 2).
# Usage: cmake -DONEJOB=<binary> -DDIR=<scratch dir> -P fuzz_auto_shards.cmake
file(REMOVE_RECURSE "${DIR}")
set(clean --unset=JOB_COMPLETION_INDEX --unset=ONEJOB_SHARDS --unset=CI_NODE_INDEX
          --unset=CI_NODE_TOTAL --unset=CIRCLE_NODE_INDEX --unset=CIRCLE_NODE_TOTAL
          --unset=BUILDKITE_PARALLEL_JOB --unset=BUILDKITE_PARALLEL_JOB_COUNT)
set(campaign fuzz --cases 160 --seed 11)

function(expect_bad name expected)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean} ${ARGN} "${ONEJOB}" ${campaign}
                          --shard auto --report-dir "${DIR}/bad"
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE errors)
  if(NOT code EQUAL 2 OR NOT errors MATCHES "${expected}")
    message(FATAL_ERROR "${name}: exit ${code}, expected 2 and \"${expected}\":\n${errors}")
  endif()
endfunction()
expect_bad("no environment" "no shard in the environment")
expect_bad("index without count" "ONEJOB_SHARDS .how many shards there are. is not"
           JOB_COMPLETION_INDEX=0)
expect_bad("index out of range" "out of range" JOB_COMPLETION_INDEX=4 ONEJOB_SHARDS=4)
expect_bad("GitLab counts from 1" "out of range" CI_NODE_INDEX=0 CI_NODE_TOTAL=4)
expect_bad("not a number" "is not a shard index" JOB_COMPLETION_INDEX=one ONEJOB_SHARDS=4)

execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean} "${ONEJOB}" ${campaign}
                        --report-dir "${DIR}/whole"
                RESULT_VARIABLE code OUTPUT_QUIET ERROR_QUIET)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "the unsharded campaign exited ${code}")
endif()
execute_process(COMMAND "${ONEJOB}" merge "${DIR}/whole" --report-dir "${DIR}/whole-merged"
                OUTPUT_VARIABLE whole)
string(REGEX REPLACE "merged [0-9]+ campaigns: " "" whole "${whole}")
string(REGEX REPLACE "\nreport:.*" "" whole "${whole}")
file(READ "${DIR}/whole-merged/summary.json" whole_json)
string(JSON whole_marks GET "${whole_json}" marks counts)

foreach(scheme IN ITEMS "k8s;JOB_COMPLETION_INDEX;ONEJOB_SHARDS;0" "gitlab;CI_NODE_INDEX;CI_NODE_TOTAL;1")
  list(GET scheme 0 name)
  list(GET scheme 1 index_var)
  list(GET scheme 2 count_var)
  list(GET scheme 3 base)
  set(dirs "")
  foreach(i RANGE 0 3)
    math(EXPR index "${i} + ${base}")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean} ${index_var}=${index} ${count_var}=4
                            "${ONEJOB}" ${campaign} --shard auto --report-dir "${DIR}/${name}-${i}"
                    RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE said)
    math(EXPR expected "${i} + 1")
    if(NOT code EQUAL 0 OR NOT said MATCHES "shard ${expected}/4 \\(from ${index_var}=${index}")
      message(FATAL_ERROR "${name} shard ${index}: exit ${code}:\n${said}")
    endif()
    list(APPEND dirs "${DIR}/${name}-${i}")
  endforeach()
  execute_process(COMMAND "${ONEJOB}" merge ${dirs} --report-dir "${DIR}/${name}-merged"
                  RESULT_VARIABLE code OUTPUT_VARIABLE merged)
  string(REGEX REPLACE "merged [0-9]+ campaigns: " "" merged "${merged}")
  string(REGEX REPLACE "\nreport:.*" "" merged "${merged}")
  if(NOT code EQUAL 0 OR NOT merged STREQUAL whole)
    message(FATAL_ERROR "${name}: 4 shards merged: ${merged}\nunsharded: ${whole}")
  endif()
  file(READ "${DIR}/${name}-merged/summary.json" merged_json)
  string(JSON merged_marks GET "${merged_json}" marks counts)
  if(NOT merged_marks STREQUAL whole_marks)
    message(FATAL_ERROR "${name}: mark counts differ:\n${merged_marks}\n${whole_marks}")
  endif()
  message(STATUS "${name}: 4 shards from the environment merge to the whole: ${merged}")
endforeach()
