// The one file of switchboard_pch (cmake/PrecompiledHeaders.cmake): the
// target exists to build the precompiled header every other target reuses.
