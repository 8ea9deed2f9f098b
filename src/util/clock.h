/*
 * clock.h — the two clocks tarn reads: wall-clock seconds for what is
 * recorded (a build's start), and a monotonic clock for what is measured
 * (durations, which must not jump with the wall clock).
 */
#ifndef TARN_UTIL_CLOCK_H
#define TARN_UTIL_CLOCK_H

/* Seconds since the epoch (CLOCK_REALTIME), with fractions. */
double clock_epoch_s(void);
/* Milliseconds on CLOCK_MONOTONIC: only differences mean anything. */
double clock_mono_ms(void);

#endif
