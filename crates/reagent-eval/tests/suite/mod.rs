mod real_model;
mod scripted;
