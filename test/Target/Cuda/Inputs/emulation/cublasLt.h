/*===- cublasLt.h - the types lib/Runtime/Cuda/Cuda.h names, for the emulation ===*
 *
 * Not cuBLASLt: the emulated build compiles only the CUDA runtime's
 * collectives, which include Cuda.h for its error checks; nothing here is
 * called.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_TEST_EMULATED_CUBLASLT_H
#define ZEROC_TEST_EMULATED_CUBLASLT_H

typedef struct zc_emu_blas *cublasLtHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0 } cublasStatus_t;

#endif
