#include "dist/mpi_world.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace vllm::dist {
namespace {

class MpiWorldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name :
         {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"}) {
      ::unsetenv(name);
    }
  }
};

TEST_F(MpiWorldTest, NoneWithoutMpirun) {
  auto world = MpiWorldFromEnvironment();
  ASSERT_TRUE(world.ok()) << world.error();
  EXPECT_FALSE(world->has_value());
}

TEST_F(MpiWorldTest, ReadsTheJobMpirunStarted) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  auto world = MpiWorldFromEnvironment();
  ASSERT_TRUE(world.ok()) << world.error();
  ASSERT_TRUE(world->has_value());
  EXPECT_EQ((*world)->size, 4);
  EXPECT_EQ((*world)->rank, 3);
  EXPECT_EQ((*world)->local_size, 2);
}

TEST_F(MpiWorldTest, RefusesValuesThatDoNotFit) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  auto outside = MpiWorldFromEnvironment();
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.error().find("do not fit OMPI_COMM_WORLD_SIZE=2"), std::string::npos);
  ::setenv("OMPI_COMM_WORLD_SIZE", "two", 1);
  auto garbled = MpiWorldFromEnvironment();
  ASSERT_FALSE(garbled.ok());
  EXPECT_NE(garbled.error().find("OMPI_COMM_WORLD_SIZE='two'"), std::string::npos);
}

}  // namespace
}  // namespace vllm::dist
