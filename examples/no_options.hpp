#pragma once
// The argument handling of an example that takes no options: -h and --help print its usage
// (exit status 0), anything else is refused on stderr, naming it, with the usage (status 2).
#include <cstdio>
#include <optional>
#include <string>

// The exit status when arguments were given (the program then ends), none when there are none.
// `usage`: a printf format with one %s, the program's name.
inline std::optional<int> answer_arguments(int argc, char** argv, const char* usage) {
    if (argc <= 1) return std::nullopt;
    const std::string a = argv[1];
    const bool help = a == "-h" || a == "--help";
    if (!help) std::fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], a.c_str());
    std::fprintf(help ? stdout : stderr, usage, argv[0]);
    return help ? 0 : 2;
}
