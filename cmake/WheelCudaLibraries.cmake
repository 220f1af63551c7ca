# stepwise::cudart and stepwise::cupti: the CUDA runtime and CUPTI that torch itself loads, from its wheel.
#
# Why: torch's CMake config links the toolkit's libcudart (torch::cudart -> CUDA::cudart), and CUPTI comes from the
# toolkit too, while libtorch_cuda.so loads the copies in site-packages/nvidia/<cu>/lib through its own RPATH. The
# executable's RUNPATH is searched first, so the process would run on the toolkit's libcudart and libcupti next to
# the wheel's cuBLAS, cuDNN and NCCL: two builds of the runtime, and a CUPTI that is not the one torch's profiler
# uses. Here both come from the wheel when it has them, and its folder leads the runtime path; env.libraries in
# every result records which files were actually loaded.

set(_stepwise_wheel_lib "")
if(STEPWISE_WITH_CUDA AND STEPWISE_TORCH_SITE)
  file(GLOB _wheel_cudart "${STEPWISE_TORCH_SITE}/nvidia/*/lib/libcudart.so.[0-9]*")
  foreach(_candidate IN LISTS _wheel_cudart)
    get_filename_component(_dir "${_candidate}" DIRECTORY)
    file(GLOB _cupti "${_dir}/libcupti.so.[0-9]*")
    if(_cupti AND EXISTS "${_dir}/../include/cupti.h")
      set(_stepwise_wheel_lib "${_dir}")
      list(GET _cupti 0 _stepwise_wheel_cupti)
      set(_stepwise_wheel_cudart "${_candidate}")
      break()
    endif()
  endforeach()
endif()

if(NOT STEPWISE_WITH_CUDA)
  return()
elseif(_stepwise_wheel_lib)
  get_filename_component(_stepwise_wheel_include "${_stepwise_wheel_lib}/../include" ABSOLUTE)
  message(STATUS "stepwise: libcudart and libcupti from torch's wheel, ${_stepwise_wheel_lib}")
  add_library(stepwise::cudart INTERFACE IMPORTED)
  set_property(TARGET stepwise::cudart PROPERTY INTERFACE_LINK_LIBRARIES "${_stepwise_wheel_cudart}")
  add_library(stepwise::cupti INTERFACE IMPORTED)
  set_property(TARGET stepwise::cupti PROPERTY INTERFACE_LINK_LIBRARIES "${_stepwise_wheel_cupti}")
  set_property(TARGET stepwise::cupti PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${_stepwise_wheel_include}")
  # torch's own link interface names the toolkit's runtime; point it at the wheel's too.
  if(TARGET torch::cudart)
    set_property(TARGET torch::cudart PROPERTY INTERFACE_LINK_LIBRARIES "${_stepwise_wheel_cudart}")
  endif()
  # The wheel's folder first: the toolkit's lib folder may still be on the runtime path for other libraries.
  list(PREPEND CMAKE_BUILD_RPATH "${_stepwise_wheel_lib}")
else()
  message(WARNING "stepwise: torch's wheel has no libcudart/libcupti under ${STEPWISE_TORCH_SITE}/nvidia; linking the "
                  "toolkit's, which may differ from the ones torch loads (env.libraries in results shows which ran)")
  add_library(stepwise::cudart INTERFACE IMPORTED)
  set_property(TARGET stepwise::cudart PROPERTY INTERFACE_LINK_LIBRARIES CUDA::cudart)
  add_library(stepwise::cupti INTERFACE IMPORTED)
  set_property(TARGET stepwise::cupti PROPERTY INTERFACE_LINK_LIBRARIES CUDA::cupti)
endif()
