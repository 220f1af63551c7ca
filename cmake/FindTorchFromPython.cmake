# Finds LibTorch inside the torch Python package: torch.utils.cmake_prefix_path of STEPWISE_PYTHON.
# scripts/setup.sh prints the interpreter (the project's cached venv, or a preinstalled torch on a GPU box).

if(NOT STEPWISE_PYTHON)
  execute_process(
    COMMAND "${PROJECT_SOURCE_DIR}/scripts/setup.sh" --python
    OUTPUT_VARIABLE STEPWISE_PYTHON OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _setup_rc)
  if(NOT _setup_rc EQUAL 0)
    message(FATAL_ERROR "scripts/setup.sh failed (${_setup_rc}); run it by hand to see why")
  endif()
  set(STEPWISE_PYTHON "${STEPWISE_PYTHON}" CACHE FILEPATH "Python interpreter whose torch provides LibTorch")
endif()

execute_process(
  COMMAND "${STEPWISE_PYTHON}" -c "import os, torch, torch.utils; print(torch.utils.cmake_prefix_path); print(torch.__version__); print(os.path.dirname(os.path.dirname(torch.__file__)))"
  OUTPUT_VARIABLE _torch_out OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _torch_rc)
if(NOT _torch_rc EQUAL 0)
  message(FATAL_ERROR "${STEPWISE_PYTHON} cannot import torch; run scripts/setup.sh")
endif()
string(REPLACE "\n" ";" _torch_out "${_torch_out}")
list(GET _torch_out 0 _torch_prefix)
list(GET _torch_out 1 STEPWISE_TORCH_VERSION)
list(GET _torch_out 2 STEPWISE_TORCH_SITE)  # site-packages: the nvidia/* wheels torch loads its CUDA libraries from
list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")

# Without a GPU there is nothing to detect; name an architecture so Caffe2's CUDA setup does not probe one.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
find_package(Torch REQUIRED)
message(STATUS "LibTorch ${STEPWISE_TORCH_VERSION} from ${_torch_prefix}")
