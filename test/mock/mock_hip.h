/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_hip.h - TEST DOUBLE: what the fake libamdhip64.so exports besides
 * the HIP API, for tests.
 */
#ifndef KREX_MOCK_HIP_H
#define KREX_MOCK_HIP_H

/* Calls that reached the mock's function of that name. */
unsigned long mock_hip_calls(const char *name);

#endif /* KREX_MOCK_HIP_H */
