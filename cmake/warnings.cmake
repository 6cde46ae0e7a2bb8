# Project-wide warnings: on and clean. Applied per target through tt_set_warnings().
function(tt_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor>)
endfunction()
