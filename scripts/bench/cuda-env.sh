# Sourced by the GPU benchmark scripts: NVRTC lives beside the CUDA toolkit, which is not
# always on the loader's path.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
