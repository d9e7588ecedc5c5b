#pragma once
// JSON text for what the tool writes or sends between its processes. Strings may carry bytes
// that are not UTF-8 (a case file's path is whatever the file system holds): they become
// U+FFFD instead of an exception that would end the run.
#include <nlohmann/json.hpp>

#include <string>

namespace distdl::verify {

inline std::string json_text(const nlohmann::json& value, int indent = -1) {
    return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace distdl::verify
