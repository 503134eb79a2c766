"""Check that the llama.cpp inside llama-cpp-python suits any x86-64 machine of the bundle's class.

A native build (``GGML_NATIVE=ON``, llama.cpp's default) compiles for the build machine's CPU and
dies with SIGILL elsewhere. ``CMAKE_ARGS="-DGGML_NATIVE=OFF"`` compiles the x86-64 baseline plus
llama.cpp's fixed default set (AVX, AVX2, F16C, FMA, BMI2). This script prints the features the
library was compiled with and fails when one lies beyond that set (AVX-512, AVX-VNNI, AMX), the
mark of a native build on a newer CPU. Exit 0: portable; 1: rebuild with GGML_NATIVE=OFF.
"""

from __future__ import annotations

import re
import sys

BEYOND_DEFAULT = ("AVX512", "AVX_VNNI", "AVX512_VNNI", "AVX512_BF16", "AMX_INT8", "AMX_BF16")


def compiled_features(info: str) -> set[str]:
    """The ``NAME = 1`` entries of ``llama_print_system_info()``."""
    return {name for name, on in re.findall(r"([A-Z0-9_]+) = (\d)", info) if on == "1"}


def main() -> int:
    """Print the compiled CPU features; non-zero when the build is tied to a newer CPU."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    features = compiled_features(info)
    print(f"llama-cpp-python {llama_cpp.__version__}: {info.strip()}")
    beyond = sorted(f for f in features if f.startswith(BEYOND_DEFAULT))
    if beyond:
        print(
            f"llama.cpp was compiled for this CPU ({', '.join(beyond)}): reinstall it with\n"
            '  CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall '
            "--no-deps llama-cpp-python",
            file=sys.stderr,
        )
        return 1
    print("llama.cpp: no CPU features beyond the GGML_NATIVE=OFF set")
    return 0


if __name__ == "__main__":
    sys.exit(main())
