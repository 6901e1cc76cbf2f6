#pragma once

// What a fuzz campaign leaves behind: summary.json, junit.xml and, for its failure, the shrunk
// repro (a scenario file), its trace and its timeline; and the sum of several campaigns' summaries
// (shards, or the jobs of one --jobs run).

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/fuzz/campaign.hpp"

namespace onejob::fuzz {

// Writes the campaign's report under `dir` (summary.json, junit.xml; for each failure
// repro/NAME.yaml, traces/NAME.jsonl and html/NAME.html) and returns the summary:
// {"seed","defects","cases","shard","cases_run","determinism_checks","marks","failures"}.
// `defect_names`: the --defect flags, as given. Throws std::exception when it cannot write.
nlohmann::ordered_json write_campaign_report(const std::filesystem::path& dir,
                                             const CampaignOptions& options,
                                             const std::vector<std::string>& defect_names,
                                             const CampaignResult& result);

// Adds up the summaries under `dirs` (each a campaign's report folder) into `out_dir`
// (summary.json, junit.xml), failures ordered by case index, and returns the merged summary.
// Throws std::runtime_error naming the file or folder when a summary is missing or malformed or
// the merged one cannot be written.
nlohmann::ordered_json merge_campaign_reports(const std::vector<std::string>& dirs,
                                              const std::filesystem::path& out_dir);

}  // namespace onejob::fuzz
