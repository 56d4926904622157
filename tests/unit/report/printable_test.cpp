// printable() (report/message_text.h): what may be shown of text a student wrote, in a
// terminal, JSON or HTML. Valid UTF-8 stays; invalid bytes and control characters become
// U+FFFD, one each; a length cap cuts at a code point.
#include <string>

#include <catch2/catch.hpp>

#include "report/message_text.h"

using gpulab::printable;

namespace {

const std::string kR = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

TEST_CASE("printable keeps valid UTF-8 text as it is", "[printable]") {
  CHECK(printable("") == "");
  CHECK(printable("alice 04 predicted 2,3 none") == "alice 04 predicted 2,3 none");
  CHECK(printable("José → GPU ✓ 😀") == "José → GPU ✓ 😀");
  CHECK(printable("<b>&amp;</b>") == "<b>&amp;</b>");  // HTML is escaped where it is written, not here
}

TEST_CASE("printable replaces every control character, escape codes included", "[printable]") {
  CHECK(printable("\x1b[2J\x1b]0;owned\x07") == kR + "[2J" + kR + "]0;owned" + kR);
  CHECK(printable(std::string("a\0b", 3)) == "a" + kR + "b");
  CHECK(printable("tab\there\nnew\rline\x7f") == "tab" + kR + "here" + kR + "new" + kR + "line" + kR);
  CHECK(printable("\xC2\x9B" "31m") == kR + "31m");  // C1 CSI, the one-byte escape's two-byte form
  CHECK(printable("abc\xE2\x80\xAE" "fed") == "abc" + kR + "fed");  // right-to-left override
  CHECK(printable("\xE2\x81\xA6x\xE2\x81\xA9") == kR + "x" + kR);  // an isolate
}

TEST_CASE("printable replaces each byte that is not valid UTF-8", "[printable]") {
  CHECK(printable("\xff\xfe") == kR + kR);
  CHECK(printable("caf\xc3") == "caf" + kR);               // cut short at the end
  CHECK(printable("\xc3(") == kR + "(");                    // a lead without its continuation
  CHECK(printable("\x80\xbf") == kR + kR);                  // lone continuations
  CHECK(printable("\xC0\xAF") == kR + kR);                  // an overlong '/'
  CHECK(printable("\xE0\x80\xAF") == kR + kR + kR);         // another
  CHECK(printable("\xED\xA0\x80") == kR + kR + kR);         // a surrogate
  CHECK(printable("\xF4\x90\x80\x80") == kR + kR + kR + kR);  // past U+10FFFF
  CHECK(printable("\xF4\x8F\xBF\xBF") == "\xF4\x8F\xBF\xBF");  // U+10FFFF itself is kept
}

TEST_CASE("printable cuts at a number of code points, never inside one", "[printable]") {
  CHECK(printable("abcdef", 3) == "abc…");
  CHECK(printable("abc", 3) == "abc");
  CHECK(printable("ééé", 2) == "éé…");
  CHECK(printable("\x1b\x1b\x1b", 1) == kR + "…");
  CHECK(printable("abc", 0) == "…");
}

TEST_CASE("printable's output is printable: applying it again changes nothing", "[printable]") {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  const std::string once = printable(every_byte + "é\xE2\x80\xAE");
  CHECK(printable(once) == once);
  CHECK(once.find('\x1b') == std::string::npos);
}
