/*
 * version.h — tarn's version, for the CLI (`tarn --version`, run records)
 * and for what the lake reports about its implementation
 * (ducklake_settings().extension_version).
 */
#ifndef TARN_VERSION_H
#define TARN_VERSION_H

#define TARN_VERSION "0.1.0"

#endif
