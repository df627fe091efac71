"""ringsim's CuPy backend: the simulated GPUs' buffers on real CUDA devices.

Nothing here imports CuPy at import time: the executor receives the cupy module from
`ringsim.execute.backend.array_module`, so `import ringsim.execute.gpu` stays as light as `import ringsim`.
"""
