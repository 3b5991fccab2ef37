// #pragma pack_matrix sets the majorness of the matrices declared after it (Slang ignores the
// pragma): row-major float4x3 is four 16-byte rows (next member at 64), column-major three
// 16-byte columns (next member at 48); an explicit majorness wins.
#pragma pack_matrix(row_major)
cbuffer Rows : register(b0)
{
    float4x3 byRows;
    float afterRows;
    column_major float4x3 byColumns;
    float afterColumns;
};

#pragma pack_matrix(column_major)
cbuffer Columns : register(b1)
{
    float4x3 byDefault;
    float afterDefault;
};

float4x3 pick(float4x3 a, float4x3 b)
{
    return a + b;
}

RWStructuredBuffer<float> results : register(u2);

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float4x3 sum = pick(byRows, byColumns) + byDefault;
    results[id.x] = sum[3][2] + afterRows + afterColumns + afterDefault;
}
