// row_major on an array of matrices: each float2x3 is two rows of 16 bytes, so the array
// stride is 32 and b follows at 80 (DXC: ArrayStride 32, MatrixStride 16; Slang alone drops
// the majorness of an array and gives 48 and 112).
struct Pose
{
    float weight;
    row_major float2x3 joints[2];
};

cbuffer Skin : register(b0)
{
    float a;
    row_major float2x3 bones[2];
    float b;
    Pose pose;
};

RWStructuredBuffer<float> results : register(u1);

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    results[id.x] = a + bones[1][1][2] + b + pose.joints[1][0][1] * pose.weight;
}
