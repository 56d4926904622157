#include "node_picture.h"

namespace gpulab::cli {
std::string render_node_picture(const Report&, const PictureStyle&) { return {}; }
}  // namespace gpulab::cli
