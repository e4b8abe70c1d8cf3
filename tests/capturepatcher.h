#pragma once

// Captures with defects, made from a good one by changing a few of its BF16 hidden states in a copy
// (tst_capturehealth, tst_gui_acceptance).
#include "core/forward/hiddenstatecapture.h"
#include "core/io/safetensorsfile.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

namespace spark::test {

constexpr std::uint16_t kBf16Zero = 0x0000;

/// Changes BF16 values of hidden_states [T, layers, H] of a copy of a capture file, in memory, and writes
/// them back when it goes out of scope.
class CapturePatcher
{
  public:
    explicit CapturePatcher(const std::filesystem::path& copy) : m_path(copy)
    {
        const auto capture = HiddenStateCapture::open(copy);
        m_hidden = capture.info().hiddenSize;
        m_layers = static_cast<std::int64_t>(capture.info().layerIds.size());
        std::int64_t at = 0;
        for (std::int64_t s = 0; s <= capture.sampleCount(); ++s) {
            m_starts.push_back(at);
            at += s < capture.sampleCount() ? capture.sampleLength(s) : 0;
        }
        const auto file = SafetensorsFile::open(copy);
        const auto* tensor = file->find("hidden_states");
        std::ifstream in(copy, std::ios::binary);
        std::uint64_t headerLength = 0;
        in.read(reinterpret_cast<char*>(&headerLength), 8);
        m_dataStart = 8 + headerLength + tensor->begin;
        m_values.resize(tensor->byteSize() / 2);
        in.seekg(static_cast<std::streamoff>(m_dataStart));
        in.read(reinterpret_cast<char*>(m_values.data()), static_cast<std::streamsize>(tensor->byteSize()));
    }
    ~CapturePatcher()
    {
        std::fstream f(m_path, std::ios::binary | std::ios::in | std::ios::out);
        f.seekp(static_cast<std::streamoff>(m_dataStart));
        f.write(reinterpret_cast<const char*>(m_values.data()),
                static_cast<std::streamsize>(2 * m_values.size()));
    }

    /// The BF16 bits at row @p token of @p sample, layer slot @p slot, element @p i.
    std::uint16_t& at(std::int64_t sample, std::int64_t token, std::int64_t slot, std::int64_t i)
    {
        const auto row = (m_starts.at(static_cast<std::size_t>(sample)) + token) * m_layers + slot;
        return m_values.at(static_cast<std::size_t>(row * m_hidden + i));
    }
    void setRow(std::int64_t sample, std::int64_t token, std::int64_t slot, std::uint16_t value)
    {
        for (std::int64_t i = 0; i < m_hidden; ++i) {
            at(sample, token, slot, i) = value;
        }
    }
    std::int64_t length(std::int64_t sample) const
    {
        return m_starts.at(static_cast<std::size_t>(sample) + 1) -
               m_starts.at(static_cast<std::size_t>(sample));
    }
    std::vector<std::uint16_t>& values() { return m_values; }

  private:
    std::filesystem::path m_path;
    std::int64_t m_hidden = 0, m_layers = 0;
    std::vector<std::int64_t> m_starts;
    std::uint64_t m_dataStart = 0;
    std::vector<std::uint16_t> m_values;
};

} // namespace spark::test
